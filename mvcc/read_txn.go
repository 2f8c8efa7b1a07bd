package mvcc

import (
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/httpkv/httpkv/kv"
)

// ReadTxn is a consistent, read-only snapshot of the store at the revision
// current when it began. Call End promptly: an open ReadTxn holds back
// compaction and defrag.
type ReadTxn struct {
	s  *Store
	tx *bolt.Tx
	v  view
}

// Read begins a read transaction.
func (s *Store) Read() (*ReadTxn, error) {
	s.mu.RLock()
	// Load the revision before the bbolt snapshot is taken: the snapshot
	// then holds at least everything up to it.
	rev := s.committedRev.Load()
	tx, err := s.db.Begin(false)
	if err != nil {
		s.mu.RUnlock()
		if s.isClosed() {
			return nil, kv.ErrClosed
		}
		return nil, fmt.Errorf("mvcc: begin read: %w", err)
	}
	return &ReadTxn{s: s, tx: tx, v: view{s: s, keys: tx.Bucket(keyBucket), rev: rev}}, nil
}

func (s *Store) isClosed() bool {
	s.closeMu.RLock()
	defer s.closeMu.RUnlock()
	return s.closed
}

// End releases the snapshot.
func (r *ReadTxn) End() {
	_ = r.tx.Rollback()
	r.s.mu.RUnlock()
}

// Rev returns the revision of the snapshot.
func (r *ReadTxn) Rev() int64 { return r.v.rev }

// CompactRev returns the compact revision as of the snapshot.
func (r *ReadTxn) CompactRev() int64 { return r.s.compactRev }

// Range reads keys from the snapshot.
func (r *ReadTxn) Range(key, end []byte, opts kv.RangeOptions) (kv.RangeResult, error) {
	return r.v.rangeKV(key, end, opts)
}

// UnsafeForEach calls fn for every key in bucket (see WriteTxn.UnsafePut);
// the slices are valid only during the call.
func (r *ReadTxn) UnsafeForEach(bucket []byte, fn func(k, v []byte) error) error {
	b := r.tx.Bucket(bucket)
	if b == nil {
		return nil
	}
	return b.ForEach(fn)
}

// History calls fn, in revision order, for every event with a main revision
// in [from, Rev()], until fn returns false. It fails with a
// *CompactedError if from is below the compact revision: that history is
// gone, possibly in part.
func (r *ReadTxn) History(from int64, fn func(kv.Event) bool) error {
	if from < r.s.compactRev {
		return &kv.CompactedError{CompactRevision: r.s.compactRev}
	}
	c := r.tx.Bucket(keyBucket).Cursor()
	for k, v := c.Seek(revBytes(kv.Revision{Main: from}, false)); k != nil; k, v = c.Next() {
		rev, tomb, err := parseRevBytes(k)
		if err != nil {
			return err
		}
		if rev.Main > r.v.rev {
			return nil
		}
		ev := kv.Event{Type: kv.EventPut}
		if tomb {
			hdr, _, err := decodeHeader(v)
			if err != nil {
				return err
			}
			ev.Type = kv.EventDelete
			ev.KV = kv.KeyValue{Key: append([]byte(nil), hdr.key...), ModRevision: rev.Main}
		} else if ev.KV, err = decodeKeyValue(v); err != nil {
			return err
		}
		if !fn(ev) {
			return nil
		}
	}
	return nil
}

// Range reads keys at the current revision (or opts.Revision).
func (s *Store) Range(key, end []byte, opts kv.RangeOptions) (kv.RangeResult, error) {
	r, err := s.Read()
	if err != nil {
		return kv.RangeResult{}, err
	}
	defer r.End()
	return r.Range(key, end, opts)
}
