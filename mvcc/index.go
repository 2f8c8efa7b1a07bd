package mvcc

import (
	"bytes"
	"sync"

	"github.com/google/btree"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
)

// treeIndex maps user keys to their keyIndex, ordered by key.
type treeIndex struct {
	// mu guards tree and every keyIndex in it. Lock order: Store.mu, then
	// treeIndex.mu.
	mu   sync.RWMutex
	tree *btree.BTreeG[*keyIndex]
}

func newTreeIndex() *treeIndex {
	return &treeIndex{tree: btree.NewG(32, func(a, b *keyIndex) bool {
		return bytes.Compare(a.key, b.key) < 0
	})}
}

// keyRev is a key and the revision of its version that a read sees.
type keyRev struct {
	key     []byte
	rev     kv.Revision
	created kv.Revision
	version int64
}

// put records a write of key at rev.
func (ti *treeIndex) put(key []byte, rev kv.Revision) {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	ki, ok := ti.tree.Get(&keyIndex{key: key})
	if !ok {
		ki = &keyIndex{key: bytes.Clone(key)}
		ti.tree.ReplaceOrInsert(ki)
	}
	ki.put(rev)
}

// tombstone records a delete of key at rev.
func (ti *treeIndex) tombstone(key []byte, rev kv.Revision) error {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	ki, ok := ti.tree.Get(&keyIndex{key: key})
	if !ok {
		return errRevisionNotFound
	}
	return ki.tombstone(rev)
}

// unput undoes the newest write of key, which must be rev.
func (ti *treeIndex) unput(key []byte, rev kv.Revision, tombstone bool) {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	ki, ok := ti.tree.Get(&keyIndex{key: key})
	if !ok {
		panic("mvcc: unput of a key not in the index")
	}
	ki.unput(rev, tombstone)
	if len(ki.generations) == 0 || ki.isEmpty() {
		ti.tree.Delete(ki)
	}
}

// get returns the version of key visible at atRev.
func (ti *treeIndex) get(key []byte, atRev int64) (keyRev, error) {
	ti.mu.RLock()
	defer ti.mu.RUnlock()
	ki, ok := ti.tree.Get(&keyIndex{key: key})
	if !ok {
		return keyRev{}, errRevisionNotFound
	}
	mod, created, ver, err := ki.get(atRev)
	if err != nil {
		return keyRev{}, err
	}
	return keyRev{key: ki.key, rev: mod, created: created, version: ver}, nil
}

// visit calls fn, in key order, for every key of r alive at atRev until
// fn returns false.
func (ti *treeIndex) visit(r keyrange.Range, atRev int64, fn func(keyRev) bool) {
	ti.mu.RLock()
	defer ti.mu.RUnlock()
	if r.IsSingle() {
		if ki, ok := ti.tree.Get(&keyIndex{key: r.Key}); ok {
			if mod, created, ver, err := ki.get(atRev); err == nil {
				fn(keyRev{key: ki.key, rev: mod, created: created, version: ver})
			}
		}
		return
	}
	limit := r.Limit() // nil: no upper bound
	ti.tree.AscendGreaterOrEqual(&keyIndex{key: r.Key}, func(ki *keyIndex) bool {
		if !keyrange.AboveKey(limit, ki.key) {
			return false
		}
		mod, created, ver, err := ki.get(atRev)
		if err != nil {
			return true
		}
		return fn(keyRev{key: ki.key, rev: mod, created: created, version: ver})
	})
}

// modifiedAfter reports whether a key of r, alive or deleted, has a
// revision after rev: a write, or a tombstone the index still holds.
func (ti *treeIndex) modifiedAfter(r keyrange.Range, rev int64) bool {
	ti.mu.RLock()
	defer ti.mu.RUnlock()
	if r.IsSingle() {
		ki, ok := ti.tree.Get(&keyIndex{key: r.Key})
		return ok && ki.modified.Main > rev
	}
	limit := r.Limit()
	changed := false
	ti.tree.AscendGreaterOrEqual(&keyIndex{key: r.Key}, func(ki *keyIndex) bool {
		if !keyrange.AboveKey(limit, ki.key) {
			return false
		}
		changed = ki.modified.Main > rev
		return !changed
	})
	return changed
}

// insertRestored adds the keys' indexes recovery built, in key order.
func (ti *treeIndex) insertRestored(kis []*keyIndex) {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	for _, ki := range kis {
		ti.tree.ReplaceOrInsert(ki)
	}
}

// compact compacts every keyIndex at atRev and returns the revisions at or
// below atRev that must stay in the backend.
//
// It walks a copy-on-write clone of the tree and takes the lock per key, so
// writers wait for one key's compaction at most, never for the whole index.
func (ti *treeIndex) compact(atRev int64) map[kv.Revision]struct{} {
	keep := make(map[kv.Revision]struct{})
	ti.mu.Lock()
	clone := ti.tree.Clone()
	ti.mu.Unlock()
	clone.Ascend(func(ki *keyIndex) bool {
		ti.mu.Lock()
		ki.compact(atRev, keep)
		if cur, ok := ti.tree.Get(ki); ok && cur == ki && ki.isEmpty() {
			ti.tree.Delete(ki)
		}
		ti.mu.Unlock()
		return true
	})
	return keep
}

// len returns the number of keys with any history in the index.
func (ti *treeIndex) len() int {
	ti.mu.RLock()
	defer ti.mu.RUnlock()
	return ti.tree.Len()
}
