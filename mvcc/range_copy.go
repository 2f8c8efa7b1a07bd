package mvcc

import (
	"bytes"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/httpkv/httpkv/kv"
)

// rangeArenaChunk is how much a range's copies take from the heap at a
// time: the keys and values of a range are copied into shared chunks
// rather than into one allocation per key, which on a 1,000-key list cost
// as much in the allocator and the collector as the copying itself.
const rangeArenaChunk = 32 << 10

// copyArena hands out copies of keys and values from shared chunks. Each
// copy is capped at its length, so that appending to one never runs into
// the next. A chunk lives as long as any copy in it: the copies of one
// range are used, and dropped, together.
type copyArena struct {
	buf []byte
}

// copy2 returns copies of a and b, adjacent in one chunk. left is how
// many copies, this one included, are still to come: a new chunk is sized
// for that many of this one's size, up to rangeArenaChunk, so that a
// range of one key takes no more than its bytes.
func (c *copyArena) copy2(a, b []byte, left int) ([]byte, []byte) {
	n := len(a) + len(b)
	if n > cap(c.buf)-len(c.buf) {
		if n > rangeArenaChunk/4 {
			// A large key or value gets a chunk of its own; the current
			// chunk stays for the small ones.
			buf := make([]byte, n)
			copy(buf, a)
			copy(buf[len(a):], b)
			return buf[:len(a):len(a)], buf[len(a):n:n]
		}
		c.buf = make([]byte, 0, max(n, min(n*left, rangeArenaChunk)))
	}
	start := len(c.buf)
	c.buf = append(c.buf, a...)
	mid := len(c.buf)
	c.buf = append(c.buf, b...)
	return c.buf[start:mid:mid], c.buf[mid:len(c.buf):len(c.buf)]
}

// loadAll copies the versions krs name out of the history, in order, into
// res.KVs: each key and its metadata, and its value when withValue is
// set. limits is charged for a key before anything of it is copied.
func (v view) loadAll(res *kv.RangeResult, krs []keyRev, withValue bool, limits *kv.ReadLimits) error {
	res.KVs = make([]kv.KeyValue, 0, len(krs))
	var arena copyArena
	cur := v.keys.Cursor()
	seek := make([]byte, 0, markedRevBytesLen)
	for i, kr := range krs {
		hdr, value, err := v.recordAt(cur, seek, kr)
		if err != nil {
			return err
		}
		if !withValue {
			value = nil
		}
		if err := limits.Charge(len(hdr.key) + len(value)); err != nil {
			return err
		}
		item := kv.KeyValue{CreateRevision: hdr.create, ModRevision: hdr.mod, Version: hdr.version, Lease: hdr.lease}
		item.Key, item.Value = arena.copy2(hdr.key, value, len(krs)-i)
		if !withValue {
			item.Value = nil
		}
		res.KVs = append(res.KVs, item)
	}
	return nil
}

// recordAt is view.record through cur: one cursor serves a whole range,
// where a bbolt Get per key builds a cursor, and allocates its stack,
// each time. It tries the record after the cursor's first: keys written
// in key order (a configuration loaded at once, a prefix filled by one
// writer) lie in revision order too, and a step is cheaper than a seek
// from the root. seek is room for the bbolt key, reused from key to key.
func (v view) recordAt(cur *bolt.Cursor, seek []byte, kr keyRev) (recordHeader, []byte, error) {
	want := appendRevBytes(seek[:0], kr.rev, false)
	k, raw := cur.Next()
	if !bytes.Equal(k, want) {
		k, raw = cur.Seek(want)
	}
	if raw == nil || !bytes.Equal(k, want) {
		return recordHeader{}, nil, fmt.Errorf("%w: revision %v of %q missing from history", ErrCorrupt, kr.rev, kr.key)
	}
	return decodeHeader(raw)
}
