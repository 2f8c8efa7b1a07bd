package mvcc

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/httpkv/httpkv/kv"
)

// TestCopyArenaCapsEachCopy: the copies of a range share chunks, yet
// appending to one never writes over its neighbour, and a large value
// gets a chunk of its own.
func TestCopyArenaCapsEachCopy(t *testing.T) {
	var a copyArena
	k1, v1 := a.copy2([]byte("k1"), []byte("v1"), 3)
	k2, v2 := a.copy2([]byte("k2"), []byte("v2"), 2)
	_ = append(k1, "XX"...)
	_ = append(v1, "YY"...)
	if string(k1) != "k1" || string(v1) != "v1" || string(k2) != "k2" || string(v2) != "v2" {
		t.Fatalf("copies = %q %q %q %q; want k1 v1 k2 v2", k1, v1, k2, v2)
	}
	if cap(k1) != len(k1) || cap(v1) != len(v1) {
		t.Fatalf("cap(key), cap(value) = %d, %d; want %d, %d", cap(k1), cap(v1), len(k1), len(v1))
	}
	big := bytes.Repeat([]byte("b"), rangeArenaChunk)
	kb, vb := a.copy2([]byte("kb"), big, 2)
	if string(kb) != "kb" || !bytes.Equal(vb, big) {
		t.Fatalf("large copy = %q, %d bytes; want kb and %d bytes", kb, len(vb), len(big))
	}
	k3, v3 := a.copy2([]byte("k3"), []byte("v3"), 1)
	if &k3[0] != &a.buf[len(a.buf)-4] || string(v3) != "v3" {
		t.Fatal("a small copy after a large one did not go to the current chunk")
	}
	var one copyArena
	one.copy2([]byte("key"), []byte("value"), 1)
	if cap(one.buf) != len("keyvalue") {
		t.Fatalf("the chunk of a one-key range holds %d bytes; want %d", cap(one.buf), len("keyvalue"))
	}
}

// TestRangeResultsOutliveEachOther reads ranges one after another, which
// reuse the pooled index slice, and checks that an earlier result is
// untouched by the later ranges and by appends to its keys and values.
func TestRangeResultsOutliveEachOther(t *testing.T) {
	s := bigRange(t, 300, 10)
	first, err := s.Range([]byte("big/"), []byte("big0"), kv.RangeOptions{Limit: 200})
	if err != nil || len(first.KVs) != 200 || !first.More {
		t.Fatalf("Range = %d keys, more %v, %v; want 200, more", len(first.KVs), first.More, err)
	}
	for i := range first.KVs {
		first.KVs[i].Key = append(first.KVs[i].Key, '!')
	}
	for range 3 {
		if _, err := s.Range([]byte("big/1"), []byte("big0"), kv.RangeOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i, item := range first.KVs {
		wantKey := fmt.Sprintf("big/%03d!", i)
		wantValue := bytes.Repeat([]byte{byte('a' + i%26)}, 10)
		if string(item.Key) != wantKey || !bytes.Equal(item.Value, wantValue) {
			t.Fatalf("KVs[%d] = %q=%q; want %q=%q", i, item.Key, item.Value, wantKey, wantValue)
		}
	}
}

// TestRevisionOrder: the read order of a range's records is by revision,
// both when positions and revisions pack into one integer and when the
// revisions are too far apart for it; a range in revision order already
// needs none.
func TestRevisionOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, spread := range []int64{10, 1 << 20, 1 << 61} {
		krs := make([]keyRev, 1000)
		for i := range krs {
			krs[i].rev = kv.Revision{Main: 1 + rng.Int64N(spread), Sub: rng.Int64N(3)}
		}
		order := revisionOrder(krs)
		if len(order) != len(krs) {
			t.Fatalf("spread %d: %d positions for %d keys", spread, len(order), len(krs))
		}
		seen := make([]bool, len(krs))
		for n, i := range order {
			if seen[i] {
				t.Fatalf("spread %d: position %d twice", spread, i)
			}
			seen[i] = true
			if n > 0 && compareRevisions(krs[order[n-1]].rev, krs[i].rev) > 0 {
				t.Fatalf("spread %d: %v read before %v", spread, krs[order[n-1]].rev, krs[i].rev)
			}
		}
		slices.SortFunc(krs, func(a, b keyRev) int { return compareRevisions(a.rev, b.rev) })
		if order := revisionOrder(krs); order != nil {
			t.Fatalf("spread %d: sorted revisions reordered: %v", spread, order[:5])
		}
	}
}

// TestRangeOutOfRevisionOrder reads keys written in another order than
// their key order, as a page and whole, copied and viewed in place: each
// key is answered in key order with its own value.
func TestRangeOutOfRevisionOrder(t *testing.T) {
	s := openTestStore(t, Options{NoFsync: true})
	for i := range 300 {
		n := i * 7 % 300
		if _, err := s.Put(kv.PutRequest{Key: fmt.Appendf(nil, "mix/%03d", n), Value: fmt.Appendf(nil, "value %d", n)}); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string, res *kv.RangeResult, want int) {
		t.Helper()
		if len(res.KVs) != want {
			t.Fatalf("%s: %d keys; want %d", what, len(res.KVs), want)
		}
		for i, item := range res.KVs {
			if string(item.Key) != fmt.Sprintf("mix/%03d", i) || string(item.Value) != fmt.Sprintf("value %d", i) {
				t.Fatalf("%s: KVs[%d] = %q=%q", what, i, item.Key, item.Value)
			}
		}
	}
	for _, limit := range []int64{0, 120} {
		want := 300
		if limit > 0 {
			want = int(limit)
		}
		res, err := s.Range([]byte("mix/"), []byte("mix0"), kv.RangeOptions{Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("Range limit %d", limit), &res, want)
		rt, err := s.Read()
		if err != nil {
			t.Fatal(err)
		}
		err = rt.View([]byte("mix/"), []byte("mix0"), kv.RangeOptions{Limit: limit}, func(res *kv.RangeResult) error {
			check(fmt.Sprintf("View limit %d", limit), res, want)
			return nil
		})
		rt.End()
		if err != nil {
			t.Fatal(err)
		}
	}
}
