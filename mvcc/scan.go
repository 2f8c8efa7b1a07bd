package mvcc

import (
	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
)

// ScanChunk is how many keys a Scan takes from the index at once, under
// the index's read lock: the writes of the transaction it reads in go
// between two chunks, and Each reads one chunk per read transaction.
const ScanChunk = 1024

// Scan reads the keys of a range alive at one revision, in key order, a
// chunk of the index at a time. It is what an import or a restore reads
// the store's side with, however large the range: it holds one chunk of
// the index, never the range. Writes of the transaction it reads in may
// go between two calls of Next; being above its revision, they are not
// seen.
type Scan struct {
	v     view
	rev   int64
	r     keyrange.Range
	from  []byte // where the next chunk starts; nil once the range is done
	chunk []keyRev
	i     int
	cur   *recordCursor
	seek  []byte
}

// scan begins a Scan of r at rev, which must be readable: not above the
// view's revision, not below the compact revision (0 means the view's).
// chunk, if not nil, is a buffer to reuse.
func (v view) scan(r keyrange.Range, rev int64, chunk []keyRev) (*Scan, error) {
	if len(r.Key) == 0 {
		return nil, invalidf("empty key")
	}
	rev, err := v.checkRev(rev)
	if err != nil {
		return nil, err
	}
	return &Scan{v: v, rev: rev, r: r, from: r.Key, chunk: chunk[:0], cur: v.keys.Cursor(), seek: make([]byte, 0, markedRevBytesLen)}, nil
}

// Rev is the revision the scan reads at.
func (s *Scan) Rev() int64 { return s.rev }

// Next returns the next key; ok is false after the last. Its key is the
// index's and its value the transaction's page: both are valid until the
// transaction ends, and must not be changed.
func (s *Scan) Next() (e kv.KeyValue, ok bool, err error) {
	if s.i == len(s.chunk) {
		if s.from == nil {
			return kv.KeyValue{}, false, nil
		}
		s.fill()
		if len(s.chunk) == 0 {
			return kv.KeyValue{}, false, nil
		}
	}
	kr := s.chunk[s.i]
	s.i++
	hdr, value, err := s.v.recordAt(s.cur, s.seek, kr)
	if err != nil {
		return kv.KeyValue{}, false, err
	}
	return kv.KeyValue{
		Key: kr.key, Value: value,
		CreateRevision: hdr.create, ModRevision: hdr.mod, Version: hdr.version, Lease: hdr.lease,
	}, true, nil
}

// fill reads the next chunk of the index.
func (s *Scan) fill() {
	s.chunk, s.i = s.chunk[:0], 0
	r := keyrange.Range{Key: s.from, End: s.r.End}
	s.v.s.index.visit(r, s.rev, func(kr keyRev) bool {
		s.chunk = append(s.chunk, kr)
		return len(s.chunk) < ScanChunk
	})
	if r.IsSingle() || len(s.chunk) < ScanChunk {
		s.from = nil
		return
	}
	s.from = after(s.chunk[len(s.chunk)-1].key)
}

// after is the first key after k.
func after(k []byte) []byte {
	return append(append(make([]byte, 0, len(k)+1), k...), 0)
}

// changedSince reports whether a key of r was written or deleted after
// rev, which must not be below the compact revision: the tombstones
// after it are still in the index then.
func (v view) changedSince(r keyrange.Range, rev int64) (bool, error) {
	if _, err := v.checkRev(rev); err != nil {
		return false, err
	}
	return v.s.index.modifiedAfter(r, rev), nil
}

// Scan begins a Scan of the keys of r alive at rev (0: the transaction's
// revision before its own writes). It fails as a range at rev would.
func (t *WriteTxn) Scan(r keyrange.Range, rev int64) (*Scan, error) {
	return t.view().scan(r, rev, nil)
}

// ChangedSince reports whether a key of r was written or deleted after
// rev, as the transaction sees the store. It fails with a
// *kv.CompactedError when rev is below the compact revision (deletes
// before it may be forgotten), with kv.ErrFutureRevision when it is above
// the current one.
func (t *WriteTxn) ChangedSince(r keyrange.Range, rev int64) (bool, error) {
	return t.view().changedSince(r, rev)
}

// Scan begins a Scan of the keys of r alive at rev (0: the snapshot's
// revision).
func (r *ReadTxn) Scan(kr keyrange.Range, rev int64) (*Scan, error) {
	return r.v.scan(kr, rev, nil)
}

// ChangedSince reports whether a key of r was written or deleted after
// rev, as of the snapshot; see WriteTxn.ChangedSince.
func (r *ReadTxn) ChangedSince(kr keyrange.Range, rev int64) (bool, error) {
	return r.v.changedSince(kr, rev)
}

// eachChunkBytes bounds the keys and values Each copies out of one read
// transaction (but for a single key larger than that).
const eachChunkBytes = 4 << 20

// Each calls fn with every key of r alive at rev (0: the current
// revision), in key order, and returns the revision it read at. It copies
// a chunk of the range (ScanChunk keys, or eachChunkBytes of keys and
// values) out of a read transaction, ends the transaction, then calls fn
// with each key of the chunk: fn may take its time (send to a slow
// client) without holding a snapshot, or holding up compaction and the
// writes behind it. The buffers are reused from chunk to chunk, so it
// holds no more than a chunk of the range and allocates nothing per key,
// whatever the range's size. When the compact revision passes rev between
// two chunks, it fails with a *kv.CompactedError. The KeyValue is valid
// during the call only. An error from fn ends it with that error.
func (s *Store) Each(r keyrange.Range, rev int64, fn func(*kv.KeyValue) error) (int64, error) {
	var c eachChunk
	from := r.Key
	for {
		at, more, err := c.read(s, keyrange.Range{Key: from, End: r.End}, rev)
		if err != nil {
			return rev, err
		}
		rev = at
		for i := range c.kvs {
			if err := fn(c.kv(i)); err != nil {
				return rev, err
			}
		}
		if !more || r.IsSingle() {
			return rev, nil
		}
		from = after(c.kv(len(c.kvs) - 1).Key)
	}
}

// eachChunk is the chunk of a range Each holds: its keys' metadata, and
// their keys and values in one buffer, at the offsets given.
type eachChunk struct {
	index []keyRev
	kvs   []kv.KeyValue
	ends  []int // where each key's key and value end in buf
	buf   []byte
	one   kv.KeyValue
}

// read copies the next chunk of r at rev, and reports the revision read
// at and whether the range goes on.
func (c *eachChunk) read(s *Store, r keyrange.Range, rev int64) (int64, bool, error) {
	rt, err := s.Read()
	if err != nil {
		return rev, false, err
	}
	defer rt.End()
	sc, err := rt.v.scan(r, rev, c.index)
	if err != nil {
		return rev, false, err
	}
	c.kvs, c.ends, c.buf = c.kvs[:0], c.ends[:0], c.buf[:0]
	for len(c.kvs) < ScanChunk && len(c.buf) < eachChunkBytes {
		e, ok, err := sc.Next()
		if err != nil {
			return rev, false, err
		}
		if !ok {
			c.index = sc.chunk
			return sc.rev, false, nil
		}
		c.buf = append(append(c.buf, e.Key...), e.Value...)
		c.ends = append(c.ends, len(e.Key), len(c.buf))
		e.Key, e.Value = nil, nil
		c.kvs = append(c.kvs, e)
	}
	c.index = sc.chunk
	return sc.rev, true, nil
}

// kv returns the i-th key of the chunk, its bytes in the chunk's buffer.
func (c *eachChunk) kv(i int) *kv.KeyValue {
	start := 0
	if i > 0 {
		start = c.ends[2*i-1]
	}
	keyEnd, end := start+c.ends[2*i], c.ends[2*i+1]
	c.one = c.kvs[i]
	c.one.Key, c.one.Value = c.buf[start:keyEnd:keyEnd], c.buf[keyEnd:end:end]
	return &c.one
}
