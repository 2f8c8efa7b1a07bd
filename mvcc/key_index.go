package mvcc

import (
	"errors"

	"github.com/httpkv/httpkv/kv"
)

// errRevisionNotFound: the key has no live version at the revision asked.
var errRevisionNotFound = errors.New("mvcc: revision not found")

// keyIndex holds the revisions at which one user key was written.
//
// The revisions are grouped into generations: a generation starts with the
// put that creates the key and ends with the tombstone that deletes it; the
// last generation is the current one and is empty while the key does not
// exist. For example, after
//
//	put(a)@2 put(a)@3 delete(a)@4 put(a)@5
//
// the index of "a" is
//
//	generations: [{2.0, 3.0, 4.0(t)}, {5.0}]
//
// A read at revision 3 finds 3.0 in the first generation (version 2); at 4
// the first generation has ended and the second not begun, so the key does
// not exist; at 5 and later it finds 5.0 (version 1).
//
// Compaction at revision c drops every revision below the newest one at or
// below c, and whole generations that ended before c. A tombstone lying
// exactly at c is kept, so that a watcher starting at c still receives that
// delete; the next compaction drops it.
type keyIndex struct {
	key         []byte
	modified    kv.Revision // the newest revision in any generation
	generations []generation
}

type generation struct {
	ver     int64       // number of writes in the generation, the tombstone included
	created kv.Revision // the put that began the generation
	revs    []kv.Revision
}

func (g *generation) isEmpty() bool { return len(g.revs) == 0 }

// put records a write of the key at rev, which must be newer than any
// revision it holds.
func (ki *keyIndex) put(rev kv.Revision) {
	if len(ki.generations) == 0 {
		ki.generations = append(ki.generations, generation{})
	}
	g := &ki.generations[len(ki.generations)-1]
	if g.isEmpty() {
		g.created = rev
	}
	g.revs = append(g.revs, rev)
	g.ver++
	ki.modified = rev
}

// restoreTombstone starts the index of a key first seen, on recovery, as
// the tombstone at rev: the rest of its generation was compacted away, but
// the delete is still history (it lies at or above the compact revision).
func (ki *keyIndex) restoreTombstone(rev kv.Revision) {
	ki.modified = rev
	ki.generations = []generation{{created: rev, ver: 1, revs: []kv.Revision{rev}}, {}}
}

// tombstone records a delete of the key at rev and ends its generation.
func (ki *keyIndex) tombstone(rev kv.Revision) error {
	if len(ki.generations) == 0 || ki.generations[len(ki.generations)-1].isEmpty() {
		return errRevisionNotFound
	}
	ki.put(rev)
	ki.generations = append(ki.generations, generation{})
	return nil
}

// unput undoes the newest put or tombstone, which must be rev. It exists so
// that a write request that fails half-way leaves the index as it found it.
func (ki *keyIndex) unput(rev kv.Revision, tombstone bool) {
	if tombstone {
		ki.generations = ki.generations[:len(ki.generations)-1]
	}
	g := &ki.generations[len(ki.generations)-1]
	if len(g.revs) == 0 || g.revs[len(g.revs)-1] != rev {
		panic("mvcc: unput of a revision that is not the newest")
	}
	g.revs = g.revs[:len(g.revs)-1]
	g.ver--
	if g.isEmpty() {
		*g = generation{}
	}
	ki.modified = kv.Revision{}
	for i := len(ki.generations) - 1; i >= 0; i-- {
		if revs := ki.generations[i].revs; len(revs) > 0 {
			ki.modified = revs[len(revs)-1]
			break
		}
	}
}

// get returns the newest revision of the key at or below atRev, the
// revision that created its generation, and its version then. It fails with
// errRevisionNotFound when the key did not exist at atRev.
func (ki *keyIndex) get(atRev int64) (modified, created kv.Revision, ver int64, err error) {
	g := ki.findGeneration(atRev)
	if g == nil {
		return kv.Revision{}, kv.Revision{}, 0, errRevisionNotFound
	}
	for n := len(g.revs) - 1; n >= 0; n-- {
		if g.revs[n].Main <= atRev {
			return g.revs[n], g.created, g.ver - int64(len(g.revs)-n-1), nil
		}
	}
	return kv.Revision{}, kv.Revision{}, 0, errRevisionNotFound
}

// findGeneration returns the generation alive at rev, or nil when the key
// did not exist then.
func (ki *keyIndex) findGeneration(rev int64) *generation {
	last := len(ki.generations) - 1
	for i := last; i >= 0; i-- {
		g := &ki.generations[i]
		if g.isEmpty() {
			continue
		}
		if i != last {
			if tomb := g.revs[len(g.revs)-1].Main; tomb <= rev {
				return nil
			}
		}
		if g.revs[0].Main <= rev {
			return g
		}
	}
	return nil
}

// compact drops the revisions no read at or above atRev can need and adds
// those it keeps at or below atRev to keep.
func (ki *keyIndex) compact(atRev int64, keep map[kv.Revision]struct{}) {
	if len(ki.generations) == 0 {
		return
	}
	// Skip generations that ended before atRev: nothing in them is visible
	// at atRev or later. A generation ending exactly at atRev is kept for
	// its tombstone, unless the next one began at atRev too (a write that
	// deleted the key and put it again): then the newest revision at or
	// below atRev is in a later generation, and only that one is kept.
	i := 0
	for i < len(ki.generations)-1 {
		g, next := &ki.generations[i], &ki.generations[i+1]
		ended := g.revs[len(g.revs)-1].Main < atRev
		superseded := !next.isEmpty() && next.revs[0].Main <= atRev
		if !ended && !superseded {
			break
		}
		i++
	}
	g := &ki.generations[i]
	for n := len(g.revs) - 1; n >= 0; n-- {
		if g.revs[n].Main <= atRev {
			keep[g.revs[n]] = struct{}{}
			if n > 0 {
				// Copy rather than reslice so the dropped prefix is freed.
				g.revs = append([]kv.Revision(nil), g.revs[n:]...)
			}
			break
		}
	}
	ki.generations = ki.generations[i:]
}

// isEmpty reports whether the key has no history left.
func (ki *keyIndex) isEmpty() bool {
	return len(ki.generations) == 1 && ki.generations[0].isEmpty()
}
