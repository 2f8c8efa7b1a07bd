package mvcc

import (
	"errors"
	"fmt"
	"io"
	"sync"

	bolt "go.etcd.io/bbolt"

	"github.com/httpkv/httpkv/kv"
)

// snapshotChunk is how much of the file a snapshot reads and writes at a
// time: large enough that a writer's per-write cost (a deadline, a
// syscall) is spread thin, small enough that Close is noticed soon.
const snapshotChunk = 1 << 20

// Snapshot is a consistent point-in-time copy of the whole backend file:
// a bbolt file holding the state at Revision, which a Store opened on it
// serves as it was (history, leases, users and roles included).
//
// It reads from one bbolt read transaction and holds no lock of the
// store: writes, compactions and defragmentation go on while it streams.
// Writers never wait for it: the file is mapped with room to grow (see
// mmapSize), and a defragmentation leaves the old file open for it.
// The price is the file's growth: pages freed while it is open are not
// reused until it closes, as with any long read transaction.
//
// Close it when done; Store.Close waits for that.
type Snapshot struct {
	s          *Store
	db         *bolt.DB
	tx         *bolt.Tx
	rev        int64
	compactRev int64
	closeOnce  sync.Once
	closeErr   error
}

// Snapshot begins a snapshot of the store as it is now.
//
// A writable store begins it on the committer, once every acknowledged
// batch is in bbolt (the snapshot copies the file, not the log), and
// makes the next batch a checkpoint: the log then never follows the
// checkpoint the snapshot holds, so the snapshot put in the file's place
// by hand does not have the log's later batches replayed onto it.
func (s *Store) Snapshot() (*Snapshot, error) {
	if s.opts.ReadOnly {
		if s.pending.Load() != nil {
			return nil, fmt.Errorf("mvcc: snapshot: the write-ahead log beside %s holds writes the file does not: open it writable once, which replays them", s.path)
		}
		return s.beginSnapshot()
	}
	var sn *Snapshot
	var beginErr error
	_, err := s.submit(&request{exclusive: func() error {
		s.checkpointFirst = true
		sn, beginErr = s.beginSnapshot()
		return nil
	}})
	switch {
	case err == nil:
		return sn, beginErr
	case s.Failed() != nil && s.pending.Load() == nil:
		// A failed store with nothing pending has it all in the file,
		// and writes nothing more.
		return s.beginSnapshot()
	}
	return nil, err
}

// beginSnapshot begins the snapshot's read transaction.
func (s *Store) beginSnapshot() (*Snapshot, error) {
	s.closeMu.RLock()
	if s.closed {
		s.closeMu.RUnlock()
		return nil, kv.ErrClosed
	}
	s.snapshots.Add(1)
	s.closeMu.RUnlock()

	// mu is held only to read db and begin on it: Defrag swaps db under
	// it, and from then on counts this snapshot on the handle it took.
	s.mu.RLock()
	db := s.db
	tx, err := db.Begin(false)
	if err == nil {
		s.snapMu.Lock()
		s.pinned[db]++
		s.snapMu.Unlock()
	}
	s.mu.RUnlock()
	if err != nil {
		s.snapshots.Done()
		if s.isClosed() {
			return nil, kv.ErrClosed
		}
		return nil, fmt.Errorf("mvcc: begin snapshot: %w", err)
	}
	sn := &Snapshot{s: s, db: db, tx: tx}
	if sn.rev, sn.compactRev, err = storedRevisions(tx, records{b: tx.Bucket(keyBucket)}); err != nil {
		sn.Close()
		return nil, err
	}
	return sn, nil
}

// Revision returns the revision of the state the snapshot holds.
func (sn *Snapshot) Revision() int64 { return sn.rev }

// CompactRevision returns the compact revision of that state.
func (sn *Snapshot) CompactRevision() int64 { return sn.compactRev }

// Size returns how many bytes WriteTo writes.
func (sn *Snapshot) Size() int64 { return sn.tx.Size() }

// WriteTo writes the bbolt file to w, Size bytes, in chunks of at most
// snapshotChunk bytes. It stops with ErrClosed at the next chunk once the
// store is closing. It may be called more than once.
func (sn *Snapshot) WriteTo(w io.Writer) (int64, error) {
	n, err := sn.tx.WriteTo(&snapshotWriter{w: w, stop: sn.s.stopSnapshots})
	if err != nil && sn.s.isClosed() && !errors.Is(err, kv.ErrClosed) {
		// bbolt does not wrap every error it passes on.
		err = fmt.Errorf("%w: %w", kv.ErrClosed, err)
	}
	return n, err
}

// Close ends the snapshot's read transaction. If a defragmentation has
// replaced the file since the snapshot began and this was the last
// snapshot reading the old one, Close closes it. It is safe to call more
// than once.
func (sn *Snapshot) Close() error {
	sn.closeOnce.Do(func() {
		s := sn.s
		sn.closeErr = sn.tx.Rollback()
		s.snapMu.Lock()
		s.pinned[sn.db]--
		closeDB := false
		if s.pinned[sn.db] == 0 {
			delete(s.pinned, sn.db)
			closeDB = s.retired[sn.db]
			delete(s.retired, sn.db)
		}
		s.snapMu.Unlock()
		if closeDB {
			sn.closeErr = errors.Join(sn.closeErr, sn.db.Close())
		}
		s.snapshots.Done()
	})
	return sn.closeErr
}

// Snapshots returns how many snapshots are open.
func (s *Store) Snapshots() int {
	s.snapMu.Lock()
	defer s.snapMu.Unlock()
	n := 0
	for _, c := range s.pinned {
		n += c
	}
	return n
}

// snapshotWriter passes a snapshot on to its writer in chunks, and stops
// once the store is closing.
type snapshotWriter struct {
	w    io.Writer
	stop <-chan struct{}
	buf  []byte
}

func (sw *snapshotWriter) Write(p []byte) (int, error) {
	select {
	case <-sw.stop:
		return 0, kv.ErrClosed
	default:
	}
	return sw.w.Write(p)
}

// ReadFrom copies the file's pages: bbolt copies them with io.Copy, which
// hands them here in chunks of snapshotChunk bytes instead of its own 32 KiB.
func (sw *snapshotWriter) ReadFrom(r io.Reader) (int64, error) {
	if sw.buf == nil {
		sw.buf = make([]byte, snapshotChunk)
	}
	var n int64
	for {
		m, rerr := io.ReadFull(r, sw.buf)
		if m > 0 {
			w, werr := sw.Write(sw.buf[:m])
			n += int64(w)
			if werr != nil {
				return n, werr
			}
			if w < m {
				return n, io.ErrShortWrite
			}
		}
		switch {
		case rerr == io.EOF || rerr == io.ErrUnexpectedEOF:
			return n, nil
		case rerr != nil:
			return n, rerr
		}
	}
}
