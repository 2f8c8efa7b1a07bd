package mvcc

import (
	"bytes"
	"fmt"
	"sort"

	bolt "go.etcd.io/bbolt"

	"github.com/httpkv/httpkv/kv"
)

// ReadTxn is a consistent, read-only snapshot of the store at the revision
// current when it began. Call End promptly: an open ReadTxn holds back
// compaction and defrag.
type ReadTxn struct {
	s  *Store
	sr *sharedRead
	tx *bolt.Tx
	v  view
}

// sharedRead is a bbolt read transaction that the reads of one revision
// share, as etcd's backend shares one among its concurrent reads: begun
// and rolled back under bbolt's locks, a transaction of its own costs a
// one-key get about a fifth of its time in the store. A read joins the
// shared transaction only while the revision it was begun at is still
// the store's; the committer retires it before each commit (a commit
// that grows the file remaps it, which waits for every open read
// transaction), and the last read using a retired one rolls it back.
type sharedRead struct {
	tx   *bolt.Tx
	keys records
	rev  int64
	// users and retired are guarded by Store.readMu.
	users   int
	retired bool
}

// Read begins a read transaction.
func (s *Store) Read() (*ReadTxn, error) {
	s.mu.RLock()
	sr, err := s.joinRead()
	if err != nil {
		s.mu.RUnlock()
		if s.isClosed() {
			return nil, kv.ErrClosed
		}
		return nil, fmt.Errorf("mvcc: begin read: %w", err)
	}
	return &ReadTxn{s: s, sr: sr, tx: sr.tx, v: view{s: s, keys: sr.keys, rev: sr.rev}}, nil
}

// joinRead returns the shared read transaction of the current revision,
// beginning it if there is none. bbolt's Begin is called without readMu
// held: it waits while a commit remaps the file, and that remap waits
// for the reads of a retired transaction, whose End takes readMu.
func (s *Store) joinRead() (*sharedRead, error) {
	s.readMu.Lock()
	if sr := s.shared; sr != nil && sr.rev == s.committedRev.Load() {
		sr.users++
		s.readMu.Unlock()
		return sr, nil
	}
	s.readMu.Unlock()
	// Load the revision, then the records acknowledged from the log but
	// not yet checkpointed, before the bbolt snapshot is taken: the
	// snapshot and those records then hold at least everything up to
	// the revision (a checkpoint drops its records only once committed).
	rev := s.committedRev.Load()
	var pending []walRecord
	if p := s.pending.Load(); p != nil {
		pending = *p
	}
	tx, err := s.db.Begin(false)
	if err != nil {
		return nil, err
	}
	keys := tx.Bucket(keyBucket)
	if len(pending) > 0 {
		// A checkpoint may have committed them since: keep those after
		// the snapshot's last record only.
		if last, _ := keys.Cursor().Last(); last != nil {
			i := sort.Search(len(pending), func(i int) bool { return bytes.Compare(pending[i].key, last) > 0 })
			pending = pending[i:]
		}
	}
	sr := &sharedRead{tx: tx, keys: records{b: keys, pending: pending}, rev: rev, users: 1}
	s.readMu.Lock()
	defer s.readMu.Unlock()
	if s.committing || rev != s.committedRev.Load() {
		// A commit is under way, or went by: this read keeps the
		// transaction to itself, and its End rolls it back.
		sr.retired = true
		return sr, nil
	}
	if old := s.shared; old != nil {
		s.retireReadLocked(old)
	}
	s.shared = sr
	return sr, nil
}

// retireReadLocked stops new reads from joining sr and rolls it back if
// no read uses it; otherwise the last one does. readMu is held.
func (s *Store) retireReadLocked(sr *sharedRead) {
	sr.retired = true
	if s.shared == sr {
		s.shared = nil
	}
	if sr.users == 0 {
		_ = sr.tx.Rollback()
	}
}

// beginCommit retires the shared read transaction and keeps reads from
// sharing another until endCommit: the commit may grow and remap the
// file, which waits for every open read transaction, and one left open
// with no read to end it would wait forever.
func (s *Store) beginCommit() {
	s.readMu.Lock()
	s.committing = true
	if s.shared != nil {
		s.retireReadLocked(s.shared)
	}
	s.readMu.Unlock()
}

// endCommit lets reads share a transaction again, once the committed
// revision is published.
func (s *Store) endCommit() {
	s.readMu.Lock()
	s.committing = false
	s.readMu.Unlock()
}

// dropSharedRead rolls back the shared read transaction, for defrag and
// Close, which hold mu and so wait for every read to end first.
func (s *Store) dropSharedRead() {
	s.readMu.Lock()
	if s.shared != nil {
		s.retireReadLocked(s.shared)
	}
	s.readMu.Unlock()
}

func (s *Store) isClosed() bool {
	s.closeMu.RLock()
	defer s.closeMu.RUnlock()
	return s.closed
}

// End releases the snapshot.
func (r *ReadTxn) End() {
	s, sr := r.s, r.sr
	s.readMu.Lock()
	sr.users--
	if sr.users == 0 && sr.retired {
		_ = sr.tx.Rollback()
	}
	s.readMu.Unlock()
	s.mu.RUnlock()
}

// Rev returns the revision of the snapshot.
func (r *ReadTxn) Rev() int64 { return r.v.rev }

// CompactRev returns the compact revision as of the snapshot.
func (r *ReadTxn) CompactRev() int64 { return r.s.compactRev }

// Range reads keys from the snapshot.
func (r *ReadTxn) Range(key, end []byte, opts kv.RangeOptions) (kv.RangeResult, error) {
	return r.v.rangeKV(key, end, opts)
}

// View calls fn with the result Range would return, from inside the
// transaction, without copying the keys and values: they alias the
// transaction's pages and are valid during the call only. An answer
// encoded as the keys are read saves their copies, and the collector
// the work of them.
func (r *ReadTxn) View(key, end []byte, opts kv.RangeOptions, fn func(*kv.RangeResult) error) error {
	res, err := r.v.rangeKeys(key, end, opts, false)
	defer releaseKVs(res.KVs)
	if err != nil {
		return err
	}
	return fn(&res)
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
	c := r.v.keys.Cursor()
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
