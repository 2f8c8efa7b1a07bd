package mvcc

import (
	bolt "go.etcd.io/bbolt"

	"github.com/httpkv/httpkv/kv"
)

// request is one unit of work for the committer goroutine: either a write
// function applied inside the shared bbolt transaction, or an exclusive
// function (defrag) run between batches with no transaction open.
type request struct {
	write     func(*WriteTxn) error
	exclusive func() error
	reply     chan reply
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
	if err := s.Failed(); err != nil {
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
// takes every request queued while the previous commit ran, applies them
// in one transaction, commits once and then answers them all: one fsync
// serves the whole batch.
func (s *Store) commitLoop() {
	defer close(s.commitDone)
	batch := make([]*request, 0, 64)
	for req := range s.queue {
		if req.exclusive != nil {
			req.reply <- reply{err: req.exclusive()}
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
			exclusive.reply <- reply{err: exclusive.exclusive()}
		}
	}
}

// runBatch applies write requests in one bbolt transaction and commits it.
// What the requests staged (see Stage) is applied only once the commit
// has succeeded, and undone if it failed.
func (s *Store) runBatch(batch []*request) {
	if err := s.Failed(); err != nil {
		for _, r := range batch {
			r.reply <- reply{err: err}
		}
		return
	}
	tx, err := s.db.Begin(true)
	if err != nil {
		err = s.fail(err)
		for _, r := range batch {
			r.reply <- reply{err: err}
		}
		return
	}
	s.batchBytes = 0
	defer s.endBatch()
	replies := make([]reply, len(batch))
	var stages []stage
	dirty := false
	for i, r := range batch {
		wt := newWriteTxn(s, tx)
		err := r.write(wt)
		if err != nil {
			wt.rollback()
			replies[i] = reply{changes: kv.Changes{Revision: s.currentRev}, err: err}
			dirty = dirty || wt.mustCommit
			continue
		}
		replies[i] = reply{changes: wt.finish()}
		stages = append(stages, wt.stages...)
		dirty = dirty || wt.metaWritten || wt.mustCommit || len(replies[i].changes.Events) > 0
	}
	if dirty {
		s.beginCommit()
		err = s.commitBatch(tx.Commit, tx.Rollback)
	} else {
		err = tx.Rollback()
	}
	if err != nil {
		if dirty {
			s.endCommit()
		}
		undoStages(stages)
		err = s.fail(err)
		for _, r := range batch {
			r.reply <- reply{err: err}
		}
		return
	}
	applyStages(stages)
	s.committedRev.Store(s.currentRev)
	if dirty {
		s.endCommit()
		s.updateSize()
	}
	s.publish(replies)
	for i, r := range batch {
		r.reply <- replies[i]
	}
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
