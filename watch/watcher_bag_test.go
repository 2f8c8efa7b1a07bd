package watch

import (
	"slices"
	"testing"
)

// TestWatcherBag: a bag holds its watchers once each across the change
// from a slice to a set, and lets go of each as it is removed, in any
// order.
func TestWatcherBag(t *testing.T) {
	for _, n := range []int{1, bagSmall, bagSmall + 1, 3 * bagSmall} {
		ws := make([]*watcher, n)
		var b watcherBag
		for i := range ws {
			ws[i] = &watcher{}
			b.add(ws[i])
		}
		got := func() []*watcher {
			var out []*watcher
			b.each(func(w *watcher) { out = append(out, w) })
			return out
		}
		if b.len() != n || len(got()) != n {
			t.Fatalf("%d added: len %d, each gave %d", n, b.len(), len(got()))
		}
		for i := 0; i < n; i += 2 {
			b.remove(ws[i])
		}
		b.remove(&watcher{}) // never added: nothing happens
		left := got()
		for i, w := range ws {
			if slices.Contains(left, w) == (i%2 == 0) {
				t.Fatalf("%d added, the even ones removed: watcher %d present = %v", n, i, i%2 != 0)
			}
		}
		if b.len() != n/2 {
			t.Fatalf("%d added, %d removed: len %d", n, n-n/2, b.len())
		}
	}
}
