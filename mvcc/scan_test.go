package mvcc

import (
	"errors"
	"fmt"
	"testing"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
)

// TestEach reads a range of more than two chunks at a past revision
// while writes go on, and checks it sees exactly the range as it was.
func TestEach(t *testing.T) {
	s := openTestStore(t, Options{NoFsync: true})
	n := 2*ScanChunk + 10
	for i := range n {
		mustPut(t, s, fmt.Sprintf("k%05d", i), "v1")
	}
	rev := s.Rev()
	mustPut(t, s, "k00003", "v2")
	if _, err := s.DeleteRange(kv.DeleteRequest{Key: []byte("k00005")}); err != nil {
		t.Fatal(err)
	}
	var got []string
	at, err := s.Each(keyrange.Prefix([]byte("k")), rev, func(e *kv.KeyValue) error {
		got = append(got, string(e.Key)+"="+string(e.Value))
		if len(got) == ScanChunk+1 {
			mustPut(t, s, "k00000", "later") // between two chunks
		}
		return nil
	})
	if err != nil || at != rev || len(got) != n || got[3] != "k00003=v1" || got[5] != "k00005=v1" || got[0] != "k00000=v1" {
		t.Fatalf("Each at %d = %d keys at %d, %v; first %q", rev, len(got), at, err, got[:6])
	}
	// At 0 it pins the current revision.
	var count int
	at, err = s.Each(keyrange.Prefix([]byte("k")), 0, func(*kv.KeyValue) error { count++; return nil })
	if err != nil || at != s.Rev() || count != n-1 {
		t.Fatalf("Each at 0 = %d keys at %d, %v; want %d at %d", count, at, err, n-1, s.Rev())
	}
	// fn's error ends it.
	stop := errors.New("stop")
	if _, err := s.Each(keyrange.Prefix([]byte("k")), 0, func(*kv.KeyValue) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("Each with a failing fn = %v", err)
	}
}

// TestEachCompactedBetweenChunks: a compaction past the revision read
// between two chunks fails the rest with a CompactedError.
func TestEachCompactedBetweenChunks(t *testing.T) {
	s := openTestStore(t, Options{NoFsync: true})
	for i := range ScanChunk + 5 {
		mustPut(t, s, fmt.Sprintf("k%05d", i), "v")
	}
	rev := s.Rev()
	mustPut(t, s, "other", "v")
	seen := 0
	_, err := s.Each(keyrange.Prefix([]byte("k")), rev, func(*kv.KeyValue) error {
		seen++
		if seen == ScanChunk {
			if _, err := s.Compact(s.Rev()); err != nil {
				return err
			}
		}
		return nil
	})
	var ce *kv.CompactedError
	if !errors.As(err, &ce) || seen != ScanChunk {
		t.Fatalf("Each compacted midway = %v after %d keys, want compacted after %d", err, seen, ScanChunk)
	}
}

// TestEachAllocatesNothingPerKey: reading a range costs a few
// allocations a chunk, none a key.
func TestEachAllocatesNothingPerKey(t *testing.T) {
	s := openTestStore(t, Options{NoFsync: true})
	for i := range 4 * ScanChunk {
		mustPut(t, s, fmt.Sprintf("k%05d", i), "value")
	}
	checkpointNow(t, s) // none left to run while allocations are counted
	var n int
	allocs := testing.AllocsPerRun(3, func() {
		n = 0
		if _, err := s.Each(keyrange.Prefix([]byte("k")), 0, func(*kv.KeyValue) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
	})
	if n != 4*ScanChunk || allocs > 200 {
		t.Fatalf("Each of %d keys: %.0f allocations, want at most 200 (none a key)", n, allocs)
	}
}

func mustPut(tb testing.TB, s *Store, key, value string) {
	tb.Helper()
	if _, err := s.Put(kv.PutRequest{Key: []byte(key), Value: []byte(value)}); err != nil {
		tb.Fatalf("Put(%q) = %v", key, err)
	}
}
