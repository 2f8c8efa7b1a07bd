package mvcc

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestIndexBuilderSorted checks that the restored keys come out once each
// and in key order, both below parallelSortMin and above it, where two
// halves are sorted at once and merged.
func TestIndexBuilderSorted(t *testing.T) {
	for _, n := range []int{0, 1, 1000, parallelSortMin + 3} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			b := indexBuilder{byKey: map[string]*keyIndex{}}
			for _, i := range rand.Perm(n) {
				key := fmt.Sprintf("k/%07d", i)
				b.byKey[key] = &keyIndex{key: []byte(key)}
			}
			got := b.sorted()
			if len(got) != n {
				t.Fatalf("sorted() returned %d keys, want %d", len(got), n)
			}
			for i := 1; i < len(got); i++ {
				if bytes.Compare(got[i-1].key, got[i].key) >= 0 {
					t.Fatalf("keys %d and %d out of order: %q, %q", i-1, i, got[i-1].key, got[i].key)
				}
			}
		})
	}
}
