package mvcc

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/httpkv/httpkv/kv"
)

// TestIndexBuilderShards feeds the builder a history of puts, deletes and
// leases over keys in random order and checks, for every number of shards,
// that the restored keys come out once each and in key order, each with
// the index and lease that applying the same history one record at a time
// gives.
func TestIndexBuilderShards(t *testing.T) {
	const keys = 3000
	rng := rand.New(rand.NewPCG(1, 2))
	var history []scannedRecord
	live := map[string]bool{}
	created := map[string]int64{}
	version := map[string]int64{}
	for rev := int64(2); rev < 4*keys; rev++ {
		key := fmt.Sprintf("k/%05d", rng.IntN(keys))
		r := scannedRecord{rev: kv.Revision{Main: rev}}
		if live[key] && rng.IntN(4) == 0 {
			r.tomb = true
			live[key] = false
		} else {
			if !live[key] {
				created[key], version[key] = rev, 0
			}
			live[key] = true
			version[key]++
			r.hdr.create, r.hdr.version = created[key], version[key]
			if rng.IntN(3) == 0 {
				r.hdr.lease = rng.Int64N(100) + 1
			}
		}
		r.hdr.key = []byte(key)
		history = append(history, r)
	}
	var want shardBuilder
	want.byKey, want.leaseOf = map[string]*keyIndex{}, map[*keyIndex]int64{}
	for i := range history {
		want.add(&history[i])
	}
	want.sort()

	for _, shards := range []int{1, 2, 3, 8} {
		t.Run(fmt.Sprint(shards), func(t *testing.T) {
			var b indexBuilder
			err := b.build(shards, func(emit func(scannedRecord)) error {
				for _, r := range history {
					emit(r)
				}
				return nil
			})
			if err != nil {
				t.Fatalf("build: %v", err)
			}
			got := b.sorted()
			if len(got) != len(want.sorted) {
				t.Fatalf("sorted() returned %d keys, want %d", len(got), len(want.sorted))
			}
			leases := map[string]int64{}
			for _, sb := range b.shards {
				for ki, id := range sb.leaseOf {
					leases[string(ki.key)] = id
				}
			}
			for i, ki := range got {
				w := want.sorted[i]
				if i > 0 && bytes.Compare(got[i-1].key, ki.key) >= 0 {
					t.Fatalf("keys %d and %d out of order: %q, %q", i-1, i, got[i-1].key, ki.key)
				}
				if !bytes.Equal(ki.key, w.key) || ki.modified != w.modified || !reflect.DeepEqual(ki.generations, w.generations) {
					t.Fatalf("key %d = %q %v %+v, want %q %v %+v", i, ki.key, ki.modified, ki.generations, w.key, w.modified, w.generations)
				}
				if leases[string(ki.key)] != want.leaseOf[w] {
					t.Fatalf("lease of %q = %d, want %d", ki.key, leases[string(ki.key)], want.leaseOf[w])
				}
			}
		})
	}
}

// TestKeyIndexSlabPiecesDoNotGrowIntoNeighbours checks that writing to a
// key restored from a slab after the restore leaves the keys restored next
// to it as they were.
func TestKeyIndexSlabPiecesDoNotGrowIntoNeighbours(t *testing.T) {
	var s keyIndexSlab
	a, b := s.keyIndex([]byte("a")), s.keyIndex([]byte("b"))
	a.modified = kv.Revision{Main: 2}
	a.generations = s.generation(kv.Revision{Main: 2}, kv.Revision{Main: 2}, 1)
	b.modified = kv.Revision{Main: 3}
	b.generations = s.generation(kv.Revision{Main: 3}, kv.Revision{Main: 3}, 1)

	a.put(kv.Revision{Main: 4})
	if err := a.tombstone(kv.Revision{Main: 5}); err != nil {
		t.Fatalf("tombstone(a, 5): %v", err)
	}
	a.put(kv.Revision{Main: 6})
	_ = append(a.key, 'x')

	if string(b.key) != "b" {
		t.Errorf("b's key = %q after writes to a, want %q", b.key, "b")
	}
	want := []generation{{created: kv.Revision{Main: 3}, ver: 1, revs: []kv.Revision{{Main: 3}}}}
	if !reflect.DeepEqual(b.generations, want) {
		t.Errorf("b's generations = %+v after writes to a, want %+v", b.generations, want)
	}
	if got, _, _, err := a.get(6); err != nil || got.Main != 6 {
		t.Errorf("a.get(6) = %v, %v; want revision 6", got, err)
	}
}
