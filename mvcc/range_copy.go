package mvcc

import (
	"bytes"
	"cmp"
	"fmt"
	"math/bits"
	"slices"
	"sync"

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

// loadAll reads the versions krs name out of the history into res.KVs,
// in the order of krs: each key and its metadata, and its value when
// withValue is set. With copies set, the keys and values are copied out
// of the transaction; without, they alias its pages, and res.KVs comes
// from kvsPool. limits is charged for a key before anything of it is
// copied.
//
// The records are read in revision order, the history's: keys written in
// another order than their key order (by many clients at once) would
// otherwise each be sought from the root of the history, a third of what
// a 1,000-key range cost. In revision order the cursor mostly steps to
// the next record.
func (v view) loadAll(res *kv.RangeResult, krs []keyRev, withValue bool, limits *kv.ReadLimits, copies bool) error {
	if copies {
		res.KVs = make([]kv.KeyValue, len(krs))
	} else {
		res.KVs = takeKVs(len(krs))
	}
	var arena copyArena
	cur := v.keys.Cursor()
	seek := make([]byte, 0, markedRevBytesLen)
	order := revisionOrder(krs)
	for n := range krs {
		i := n
		if order != nil {
			i = int(order[n])
		}
		hdr, value, err := v.recordAt(cur, seek, krs[i])
		if err != nil {
			return err
		}
		if !withValue {
			value = nil
		}
		if err := limits.Charge(len(hdr.key) + len(value)); err != nil {
			return err
		}
		item := kv.KeyValue{Key: hdr.key, Value: value, CreateRevision: hdr.create, ModRevision: hdr.mod, Version: hdr.version, Lease: hdr.lease}
		if copies {
			item.Key, item.Value = arena.copy2(hdr.key, value, len(krs)-n)
			if !withValue {
				item.Value = nil
			}
		}
		res.KVs[i] = item
	}
	return nil
}

// revisionOrder returns the positions of krs sorted by revision, or nil
// when krs is in revision order already (keys written in key order).
// Each position is sorted packed with its revision into one integer, when
// the revisions' spread leaves room for it (in any range short of
// trillions of revisions wide): a sort of integers costs a fraction of
// one comparing through a function.
func revisionOrder(krs []keyRev) []uint64 {
	if len(krs) < 2 {
		return nil
	}
	lo, hi, maxSub := krs[0].rev.Main, krs[0].rev.Main, int64(0)
	sorted := true
	for i, kr := range krs {
		lo, hi, maxSub = min(lo, kr.rev.Main), max(hi, kr.rev.Main), max(maxSub, kr.rev.Sub)
		if i > 0 && compareRevisions(krs[i-1].rev, kr.rev) > 0 {
			sorted = false
		}
	}
	if sorted {
		return nil
	}
	order := make([]uint64, len(krs))
	posBits := bits.Len(uint(len(krs)))
	subBits := bits.Len64(uint64(maxSub))
	if bits.Len64(uint64(hi-lo))+subBits+posBits > 64 {
		for i := range order {
			order[i] = uint64(i)
		}
		slices.SortFunc(order, func(a, b uint64) int { return compareRevisions(krs[a].rev, krs[b].rev) })
		return order
	}
	for i, kr := range krs {
		order[i] = uint64(kr.rev.Main-lo)<<(subBits+posBits) | uint64(kr.rev.Sub)<<posBits | uint64(i)
	}
	slices.Sort(order)
	for n := range order {
		order[n] &= 1<<posBits - 1
	}
	return order
}

func compareRevisions(a, b kv.Revision) int {
	if c := cmp.Compare(a.Main, b.Main); c != 0 {
		return c
	}
	return cmp.Compare(a.Sub, b.Sub)
}

// recordAt is view.record through cur: one cursor serves a whole range,
// where a bbolt Get per key builds a cursor, and allocates its stack,
// each time. It tries the record after the cursor's first: keys written
// in key order (a configuration loaded at once, a prefix filled by one
// writer) lie in revision order too, and a step is cheaper than a seek
// from the root. seek is room for the bbolt key, reused from key to key.
func (v view) recordAt(cur *recordCursor, seek []byte, kr keyRev) (recordHeader, []byte, error) {
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

// kvsPool keeps the result slices of ranges whose keys and values alias
// a transaction (ReadTxn.View), for the next such range: a 1,000-key
// list's is 80 KiB.
var kvsPool sync.Pool // of *[]kv.KeyValue

// takeKVs returns a slice of n zero KeyValues, from the pool when it has
// one large enough.
func takeKVs(n int) []kv.KeyValue {
	if p, ok := kvsPool.Get().(*[]kv.KeyValue); ok && cap(*p) >= n {
		return (*p)[:n]
	}
	return make([]kv.KeyValue, n)
}

// releaseKVs gives kvs back to kvsPool once nothing uses it. Slices
// longer than a page of the largest limit are left to the collector.
func releaseKVs(kvs []kv.KeyValue) {
	if cap(kvs) == 0 || cap(kvs) > maxPooledKeyRevs {
		return
	}
	// Let go of the keys and values, which alias a transaction. What lies
	// past len(kvs) is zero already: every pooled slice is zero to its cap.
	clear(kvs)
	kvs = kvs[:0]
	kvsPool.Put(&kvs)
}
