package mvcc

import (
	"github.com/httpkv/httpkv/keyrange"
)

// scanChunk is how many keys a Scan takes from the index at once, under
// the index's read lock: the writes of the transaction it reads in go
// between two chunks.
const scanChunk = 1024

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
}

// scan begins a Scan of r at rev, which must be readable: not above the
// view's revision, not below the compact revision (0 means the view's).
func (v view) scan(r keyrange.Range, rev int64) (*Scan, error) {
	if len(r.Key) == 0 {
		return nil, invalidf("empty key")
	}
	rev, err := v.checkRev(rev)
	if err != nil {
		return nil, err
	}
	return &Scan{v: v, rev: rev, r: r, from: r.Key}, nil
}

// Rev is the revision the scan reads at.
func (s *Scan) Rev() int64 { return s.rev }

// Next returns the next key, its value and its mod revision; ok is false
// after the last. The key is the index's, the value the transaction's
// page: both are valid until the transaction ends, and must not be
// changed.
func (s *Scan) Next() (key, value []byte, mod int64, ok bool, err error) {
	if s.i == len(s.chunk) {
		if s.from == nil {
			return nil, nil, 0, false, nil
		}
		s.fill()
		if len(s.chunk) == 0 {
			return nil, nil, 0, false, nil
		}
	}
	kr := s.chunk[s.i]
	s.i++
	_, value, err = s.v.record(kr)
	if err != nil {
		return nil, nil, 0, false, err
	}
	return kr.key, value, kr.rev.Main, true, nil
}

// fill reads the next chunk of the index.
func (s *Scan) fill() {
	s.chunk, s.i = s.chunk[:0], 0
	r := keyrange.Range{Key: s.from, End: s.r.End}
	s.v.s.index.visit(r, s.rev, func(kr keyRev) bool {
		s.chunk = append(s.chunk, kr)
		return len(s.chunk) < scanChunk
	})
	if r.IsSingle() || len(s.chunk) < scanChunk {
		s.from = nil
		return
	}
	last := s.chunk[len(s.chunk)-1].key
	s.from = append(append(make([]byte, 0, len(last)+1), last...), 0)
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
	return t.view().scan(r, rev)
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
	return r.v.scan(kr, rev)
}

// ChangedSince reports whether a key of r was written or deleted after
// rev, as of the snapshot; see WriteTxn.ChangedSince.
func (r *ReadTxn) ChangedSince(kr keyrange.Range, rev int64) (bool, error) {
	return r.v.changedSince(kr, rev)
}
