package mvcc

import (
	"bytes"

	"github.com/httpkv/httpkv/kv"
)

const (
	// slabLen is how many keys' indexes one chunk of a keyIndexSlab
	// holds, and slabKeyBytes the size of a chunk of key bytes.
	slabLen      = 1024
	slabKeyBytes = 32 << 10
)

// keyIndexSlab allocates the indexes a restore builds in chunks: a key's
// keyIndex, its key's bytes, its first generation and that generation's
// first revision each come from a chunk shared with a thousand other keys,
// so a million keys cost a few thousand allocations instead of four
// million, and the collector marks a few thousand objects instead of four
// million while the restore runs and after.
//
// A chunk lives while any of its keys' indexes does, so a store that
// deletes and compacts most of its keys after a restart keeps up to the
// memory the restore took; never more. Each piece a chunk hands out has no
// room to grow (cap equals len), so a later put or delete of the key
// copies it out of the chunk instead of writing over its neighbour.
type keyIndexSlab struct {
	kis  []keyIndex
	gens []generation
	revs []kv.Revision
	keys []byte
}

// keyIndex returns a new, empty index for a copy of key.
func (s *keyIndexSlab) keyIndex(key []byte) *keyIndex {
	if len(s.kis) == cap(s.kis) {
		s.kis = make([]keyIndex, 0, slabLen)
	}
	s.kis = s.kis[:len(s.kis)+1]
	ki := &s.kis[len(s.kis)-1]
	ki.key = s.copyKey(key)
	return ki
}

func (s *keyIndexSlab) copyKey(key []byte) []byte {
	if len(key) > slabKeyBytes/16 {
		return bytes.Clone(key)
	}
	if cap(s.keys)-len(s.keys) < len(key) {
		s.keys = make([]byte, 0, slabKeyBytes)
	}
	n := len(s.keys)
	s.keys = append(s.keys, key...)
	return s.keys[n:len(s.keys):len(s.keys)]
}

// generation returns the generations of a key first seen, on recovery, at
// modified: one generation, created at created and at version ver, that
// holds modified alone.
func (s *keyIndexSlab) generation(created, modified kv.Revision, ver int64) []generation {
	if len(s.gens) == cap(s.gens) {
		s.gens = make([]generation, 0, slabLen)
		s.revs = make([]kv.Revision, 0, slabLen)
	}
	n := len(s.gens)
	s.revs = append(s.revs, modified)
	s.gens = append(s.gens, generation{created: created, ver: ver, revs: s.revs[n : n+1 : n+1]})
	return s.gens[n : n+1 : n+1]
}
