package watch

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/httpkv/httpkv/keyrange"
)

// treeEntry is one watcher of the brute-force model of an intervalTree.
type treeEntry struct {
	r keyrange.Range
	w *watcher
}

// bruteStab is what stab must find: every watcher whose range holds key.
func bruteStab(entries []treeEntry, key []byte) []*watcher {
	var ws []*watcher
	for _, e := range entries {
		if e.r.Contains(key) {
			ws = append(ws, e.w)
		}
	}
	return ws
}

func stabbed(t *intervalTree, key []byte) []*watcher {
	var ws []*watcher
	t.stab(key, func(w *watcher) { ws = append(ws, w) })
	return ws
}

func sortWatchers(ws []*watcher) {
	slices.SortFunc(ws, func(a, b *watcher) int { return int(a.next - b.next) })
}

// checkMaxEnd checks the treap's invariants below n: search order on the
// range, heap order on the priority, and every node's maxEnd being the
// highest end in its subtree.
func checkMaxEnd(tb testing.TB, n *itNode) []byte {
	tb.Helper()
	if n == nil {
		return nil
	}
	want := n.limit
	for _, c := range []*itNode{n.left, n.right} {
		if c == nil {
			continue
		}
		if c.prio > n.prio {
			tb.Fatalf("node %q: child %q has a higher priority", n.r, c.r)
		}
		if e := checkMaxEnd(tb, c); keyrange.CompareLimits(e, want) > 0 {
			want = e
		}
	}
	if n.left != nil && compareRanges(n.left.r, n.r) >= 0 || n.right != nil && compareRanges(n.right.r, n.r) <= 0 {
		tb.Fatalf("node %q: children out of order", n.r)
	}
	if keyrange.CompareLimits(n.maxEnd, want) != 0 || (want == nil) != (n.maxEnd == nil) {
		tb.Fatalf("node %q: maxEnd %q, want %q", n.r, n.maxEnd, want)
	}
	if n.watchers.len() == 0 {
		tb.Fatalf("node %q has no watchers", n.r)
	}
	return want
}

func TestIntervalTreeRandom(t *testing.T) {
	seed := testSeed(t)
	for _, tc := range []struct {
		name string
		key  func(*rand.Rand) []byte
	}{
		{"single-byte", func(rng *rand.Rand) []byte { return []byte{byte('a' + rng.IntN(16))} }},
		{"multi-byte", func(rng *rand.Rand) []byte {
			b := make([]byte, 1+rng.IntN(3))
			for i := range b {
				b[i] = byte('a' + rng.IntN(3))
			}
			return b
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 1))
			var tree intervalTree
			var entries []treeEntry
			id := int64(0)
			for op := range 2000 {
				switch {
				case len(entries) > 0 && rng.IntN(5) < 2:
					i := rng.IntN(len(entries))
					e := entries[i]
					entries = slices.Delete(entries, i, i+1)
					tree.remove(e.r, e.w)
				default:
					start, end := tc.key(rng), tc.key(rng)
					switch rng.IntN(4) {
					case 0:
						end = []byte{0} // no upper bound
					case 1:
						if bytes.Compare(start, end) > 0 {
							start, end = end, start
						}
					case 2:
						// A range as narrow as one key.
						end = append(bytes.Clone(start), 0)
					}
					// Share ranges often, so nodes hold several watchers.
					if len(entries) > 0 && rng.IntN(4) == 0 {
						r := entries[rng.IntN(len(entries))].r
						start, end = r.Key, r.End
					}
					id++
					e := treeEntry{r: keyrange.Range{Key: start, End: end}, w: &watcher{next: id}}
					entries = append(entries, e)
					tree.add(e.r, e.w)
				}
				if op%16 == 0 {
					checkMaxEnd(t, tree.root)
				}
				for range 2 {
					key := tc.key(rng)
					got, want := stabbed(&tree, key), bruteStab(entries, key)
					sortWatchers(got)
					sortWatchers(want)
					if !slices.Equal(got, want) {
						t.Fatalf("op %d: stab(%q) found %s, want %s", op, key, ids(got), ids(want))
					}
				}
			}
			for _, e := range entries {
				tree.remove(e.r, e.w)
			}
			if tree.root != nil {
				t.Fatalf("tree not empty after removing every watcher: root %q", tree.root.r)
			}
		})
	}
}

func ids(ws []*watcher) string {
	s := make([]int64, len(ws))
	for i, w := range ws {
		s[i] = w.next
	}
	return fmt.Sprint(s)
}
