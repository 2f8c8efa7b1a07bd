package mvcc

import (
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/httpkv/httpkv/kv"
)

// request is one unit of work for the committer goroutine: either a write
// function applied inside the shared bbolt transaction, or an exclusive
// function (defrag) run between batches with no transaction open.
type request struct {
	write     func(*WriteTxn) error
	exclusive func() error
	// inMemory marks an exclusive request that touches no file: it runs
	// on a failed store too (an observer registered as the server
	// starts on a store that could not replay its log).
	inMemory bool
	reply    chan reply
}

type reply struct {
	changes kv.Changes
	err     error
}

// Write runs fn in the store's write transaction and returns once its
// changes are durable (or, with NoFsync, committed). fn sees the effects of
// every write acknowledged before it and of its own earlier writes; all its
// writes share one new revision. If fn returns an error, every change it
// made is undone and the error is returned.
//
// fn runs on the committer goroutine: it must not block, and must not call
// the Store's own methods.
func (s *Store) Write(fn func(*WriteTxn) error) (kv.Changes, error) {
	r, err := s.submit(&request{write: fn})
	return r.changes, err
}

func (s *Store) submit(req *request) (reply, error) {
	if s.opts.ReadOnly {
		return reply{}, ErrReadOnly
	}
	if err := s.Failed(); err != nil && !req.inMemory {
		return reply{}, err
	}
	req.reply = make(chan reply, 1)
	s.closeMu.RLock()
	if s.closed {
		s.closeMu.RUnlock()
		return reply{}, kv.ErrClosed
	}
	s.queue <- req
	s.closeMu.RUnlock()
	r := <-req.reply
	return r, r.err
}

// commitLoop is the committer: the only goroutine that writes to bbolt. It
// takes every request queued while the previous batch was made durable,
// applies them in one transaction, makes them durable once (see
// runBatch) and then answers them all: one fsync serves the whole batch.
// Between batches it makes the checkpoints that fall due.
func (s *Store) commitLoop() {
	defer close(s.commitDone)
	batch := make([]*request, 0, 64)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		var req *request
		var ok bool
		if s.openTx == nil {
			req, ok = <-s.queue
		} else {
			timer.Reset(time.Until(s.checkpointAt))
			select {
			case req, ok = <-s.queue:
			case <-timer.C:
				s.checkpointIdle()
				continue
			}
			timer.Stop()
		}
		if !ok {
			s.checkpointIdle()
			return
		}
		if req.exclusive != nil {
			s.runExclusive(req)
			continue
		}
		batch = append(batch[:0], req)
		var exclusive *request
	drain:
		for len(batch) < maxBatchRequests {
			select {
			case r, ok := <-s.queue:
				if !ok {
					break drain
				}
				if r.exclusive != nil {
					exclusive = r
					break drain
				}
				batch = append(batch, r)
			default:
				break drain
			}
		}
		s.runBatch(batch)
		if exclusive != nil {
			s.runExclusive(exclusive)
		}
	}
}

// runExclusive runs an exclusive request and answers it. One that
// touches the file (it may copy or replace it) runs once every
// acknowledged batch is in bbolt.
func (s *Store) runExclusive(req *request) {
	if !req.inMemory {
		s.checkpointIdle()
		if err := s.Failed(); err != nil && s.pending.Load() != nil {
			// Batches acknowledged from the log are not in bbolt, and
			// the store can no longer checkpoint them: they are
			// replayed on the next Open.
			req.reply <- reply{err: err}
			return
		}
	}
	req.reply <- reply{err: req.exclusive()}
}

// checkpointInterval is how long batches acknowledged from the log may
// wait for a checkpoint, when no batch that must be committed to bbolt
// comes first.
const checkpointInterval = 100 * time.Millisecond

// runBatch applies write requests in one bbolt write transaction and
// makes them durable: by appending their history records to the
// write-ahead log, leaving the transaction open for the next batches,
// or, when the batch wrote anything else (or no longer fits the log, or
// a checkpoint is due), by committing the transaction: a checkpoint.
// What the requests staged (see Stage) is applied only once that has
// succeeded, and undone if it failed.
func (s *Store) runBatch(batch []*request) {
	if err := s.Failed(); err != nil {
		for _, r := range batch {
			r.reply <- reply{err: err}
		}
		return
	}
	tx := s.openTx
	if tx == nil {
		var err error
		if tx, err = s.beginWrite(); err != nil {
			err = s.fail(err)
			for _, r := range batch {
				r.reply <- reply{err: err}
			}
			return
		}
	}
	if s.openTx == nil {
		// What the batches logged since the last checkpoint added is
		// not in dbSize yet: it counts until the checkpoint.
		s.batchBytes = 0
	}
	defer s.endBatch()
	replies := make([]reply, len(batch))
	var stages []stage
	var logged []walRecord
	loggedBytes := 0
	dirty, direct := false, false
	for i, r := range batch {
		wt := newWriteTxn(s, tx)
		err := r.write(wt)
		if err != nil {
			wt.rollback()
			replies[i] = reply{changes: kv.Changes{Revision: s.currentRev}, err: err}
			dirty = dirty || wt.mustCommit
			direct = direct || wt.direct
			continue
		}
		replies[i] = reply{changes: wt.finish()}
		stages = append(stages, wt.stages...)
		for _, rec := range wt.logged {
			loggedBytes += len(rec.key) + len(rec.value) + 8
		}
		logged = append(logged, wt.logged...)
		dirty = dirty || wt.metaWritten || wt.mustCommit || len(replies[i].changes.Events) > 0
		direct = direct || wt.direct
	}
	var err error
	checkpointed := false
	switch {
	case !dirty:
		if s.openTx == nil {
			err = tx.Rollback()
		}
	case !direct && len(logged) > 0 && s.wal != nil && !s.checkpointFirst && s.wal.room(loggedBytes) && (s.openTx == nil || time.Now().Before(s.checkpointAt)):
		err = s.commitBatch(func() error { return s.wal.appendBatch(logged) }, func() error { return nil })
		if err != nil {
			_ = tx.Rollback()
			s.openTx = nil
			break
		}
		if s.openTx == nil {
			s.openTx = tx
			s.checkpointAt = time.Now().Add(s.checkpointEvery)
		}
		s.addPending(logged)
	default:
		checkpointed = true
		err = s.checkpoint(tx)
	}
	if err != nil {
		undoStages(stages)
		err = s.fail(err)
		for _, r := range batch {
			r.reply <- reply{err: err}
		}
		return
	}
	applyStages(stages)
	s.committedRev.Store(s.currentRev)
	if checkpointed {
		s.endCommit()
		s.updateSize()
	}
	s.publish(replies)
	for i, r := range batch {
		r.reply <- replies[i]
	}
}

// addPending makes the records of a batch acknowledged from the log
// readable (see records), before its revision is published.
func (s *Store) addPending(recs []walRecord) {
	s.pendingRecs = append(s.pendingRecs, recs...)
	p := s.pendingRecs[:len(s.pendingRecs):len(s.pendingRecs)]
	s.pending.Store(&p)
}

// checkpoint commits tx, which holds the open batch and every batch
// acknowledged from the log since the last checkpoint, records the
// revision it reached in the meta bucket, drops the pending records
// (reads find them in bbolt now) and rewinds the log. On success the
// caller ends the commit (endCommit) once it has published the
// revision; on failure tx is rolled back and the store must fail. A
// rewind that fails after the commit fails the store but not the
// checkpoint: the batch is in the file, and is answered so.
func (s *Store) checkpoint(tx *bolt.Tx) error {
	s.openTx = nil
	var mark checkpointMark
	if s.wal != nil {
		var err error
		if mark, err = putCheckpoint(tx.Bucket(metaBucket), s.currentRev); err != nil {
			_ = tx.Rollback()
			return err
		}
	}
	s.beginCommit()
	if err := s.commitBatch(tx.Commit, tx.Rollback); err != nil {
		s.endCommit()
		return err
	}
	s.unreplayed, s.checkpointFirst = nil, false
	if s.pendingRecs != nil {
		// Readers may still hold the old slice: start a new one.
		s.pendingRecs = nil
		s.pending.Store(nil)
	}
	if s.wal != nil {
		if err := s.wal.rewindLazily(mark); err != nil {
			// The log left as it was, or half rewound, follows no
			// checkpoint of the file: the next Open does not replay it.
			_ = s.fail(err)
		}
	}
	return nil
}

// beginWrite begins a write transaction, with the records of a log
// that Open could not replay put back in first: the next checkpoint then
// has them in the file before the log is rewound.
func (s *Store) beginWrite() (*bolt.Tx, error) {
	tx, err := s.db.Begin(true)
	if err != nil || len(s.unreplayed) == 0 {
		return tx, err
	}
	keys := tx.Bucket(keyBucket)
	keys.FillPercent = 0.9
	for _, r := range s.unreplayed {
		if err := keys.Put(r.key, r.value); err != nil {
			_ = tx.Rollback()
			return nil, err
		}
	}
	return tx, nil
}

// checkpointIdle commits the open transaction, if batches acknowledged
// from the log wait in it (or records Open could not replay), between
// batches.
func (s *Store) checkpointIdle() {
	if s.openTx == nil && len(s.unreplayed) > 0 && s.Failed() == nil {
		tx, err := s.beginWrite()
		if err != nil {
			_ = s.fail(err)
			return
		}
		s.openTx = tx
	}
	if s.openTx == nil {
		return
	}
	if err := s.checkpoint(s.openTx); err != nil {
		_ = s.fail(err)
		return
	}
	s.endCommit()
	s.updateSize()
}

// endBatch forgets the open batch's view of staged state, applied or
// undone by now.
func (s *Store) endBatch() {
	clear(s.batchMoves) // their keys point into the batch's records
	s.batchMoves = s.batchMoves[:0]
	s.stagedCompactRev = 0
}

// updateSize refreshes the backend size figures after a commit.
func (s *Store) updateSize() {
	_ = s.db.View(func(tx *bolt.Tx) error {
		size := tx.Size()
		st := s.db.Stats()
		s.dbSize.Store(size)
		s.dbSizeInUse.Store(size - int64(st.FreePageN+st.PendingPageN)*int64(s.db.Info().PageSize))
		return nil
	})
}
