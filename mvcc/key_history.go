package mvcc

import (
	"sort"

	"github.com/httpkv/httpkv/kv"
)

// walkKey calls fn for the revisions of key held in the index, from pos
// on (pos included) upwards, or downwards with descend, each with whether
// it is a tombstone, until fn returns false. fn runs under the index's
// read lock: it must not call back into the index.
func (ti *treeIndex) walkKey(key []byte, pos kv.Revision, descend bool, fn func(rev kv.Revision, tomb bool) bool) {
	ti.mu.RLock()
	defer ti.mu.RUnlock()
	if ki, ok := ti.tree.Get(&keyIndex{key: key}); ok {
		ki.walk(pos, descend, fn)
	}
}

// walk is walkKey over one key. Every generation but the last ends with
// the tombstone that closed it, so which revisions are tombstones needs no
// lookup. Both ends are found by binary search: a key written a million
// times costs no more to start than one written once.
func (ki *keyIndex) walk(pos kv.Revision, descend bool, fn func(rev kv.Revision, tomb bool) bool) {
	gens := ki.generations
	last := len(gens) - 1
	tomb := func(gi, ri int) bool { return gi < last && ri == len(gens[gi].revs)-1 }
	if !descend {
		// The first generation ending at or after pos (the last one, if
		// empty, ends nowhere: it sorts last).
		gi := sort.Search(len(gens), func(i int) bool {
			revs := gens[i].revs
			return len(revs) == 0 || !pos.GreaterThan(revs[len(revs)-1])
		})
		for ; gi < len(gens); gi++ {
			revs := gens[gi].revs
			ri := sort.Search(len(revs), func(i int) bool { return !pos.GreaterThan(revs[i]) })
			for ; ri < len(revs); ri++ {
				if !fn(revs[ri], tomb(gi, ri)) {
					return
				}
			}
		}
		return
	}
	// The last generation beginning at or before pos.
	gi := sort.Search(len(gens), func(i int) bool {
		revs := gens[i].revs
		return len(revs) == 0 || revs[0].GreaterThan(pos)
	}) - 1
	for ; gi >= 0; gi-- {
		revs := gens[gi].revs
		ri := sort.Search(len(revs), func(i int) bool { return revs[i].GreaterThan(pos) }) - 1
		for ; ri >= 0; ri-- {
			if !fn(revs[ri], tomb(gi, ri)) {
				return
			}
		}
	}
}
