package mvcc

import (
	"bytes"
	"fmt"

	"github.com/httpkv/httpkv/kv"
)

// compactionJob is a compaction whose compact revision is durable and
// whose history below it still has to be removed.
type compactionJob struct {
	rev  int64
	done chan error // receives the outcome, then is closed
}

func newCompactionJob(rev int64) compactionJob {
	return compactionJob{rev: rev, done: make(chan error, 1)}
}

// Compact discards the history below rev. Once it returns, reads below rev
// fail with a *CompactedError and reading exactly at rev still works: every
// key keeps its newest version at or below rev, and a delete made exactly
// at rev keeps its tombstone so a watcher starting at rev sees it.
//
// The history is removed in the background, in commits of at most
// Options.CompactionBatchLimit revisions so writes are not held up; the
// returned channel yields nil (or why it stopped) when that is done. A
// compaction cut short by a crash or Close finishes on the next Open.
//
// rev must be above the compact revision (else *CompactedError) and not
// above the current revision (else kv.ErrFutureRevision).
func (s *Store) Compact(rev int64) (<-chan error, error) {
	_, err := s.Write(func(tx *WriteTxn) error { return s.compactIn(tx, rev) })
	if err != nil {
		return nil, err
	}
	job := newCompactionJob(rev)
	select {
	case s.compactions <- job:
	case <-s.stopCompact:
		job.done <- kv.ErrClosed
		close(job.done)
	}
	return job.done, nil
}

// compactIn schedules a compaction at rev in tx: it writes the schedule
// and stages the raise of the compact revision, applied once tx is
// committed.
func (s *Store) compactIn(tx *WriteTxn, rev int64) error {
	// An earlier request of the batch may have compacted already.
	cur := max(s.compactRev, s.stagedCompactRev)
	if rev <= cur {
		return &kv.CompactedError{CompactRevision: cur}
	}
	if cur := tx.Rev(); rev > cur {
		return kv.FutureRevision("compact revision", rev, cur)
	}
	tx.direct = true
	if err := putInt64(tx.tx.Bucket(metaBucket), metaScheduledCompact, rev); err != nil {
		return err
	}
	tx.mustCommit = true // the schedule must be committed
	prev := s.stagedCompactRev
	s.stagedCompactRev = rev
	tx.Stage(func() {
		// Readers hold mu.RLock from their revision check to their last
		// lookup: once this returns, no read below rev is in flight, and
		// the history below it can go.
		s.mu.Lock()
		s.compactRev = rev
		s.mu.Unlock()
	}, func() { s.stagedCompactRev = prev })
	return nil
}

// compactLoop removes compacted history, one compaction at a time.
func (s *Store) compactLoop() {
	defer close(s.compactDone)
	for {
		select {
		case job := <-s.compactions:
			err := s.compact(job.rev)
			job.done <- err
			close(job.done)
		case <-s.stopCompact:
			// Jobs still queued are resumed by the next Open, which
			// finds their revision scheduled but not finished.
			for {
				select {
				case job := <-s.compactions:
					job.done <- kv.ErrClosed
					close(job.done)
				default:
					return
				}
			}
		}
	}
}

// compact compacts the index at rev, then deletes from the backend every
// revision at or below rev the index no longer holds.
func (s *Store) compact(rev int64) error {
	keep := s.index.compact(rev)
	from := revBytes(kv.Revision{}, false)
	end := revBytes(kv.Revision{Main: rev + 1}, false)
	for {
		select {
		case <-s.stopCompact:
			return kv.ErrClosed
		default:
		}
		var next []byte
		_, err := s.Write(func(tx *WriteTxn) error {
			var err error
			next, err = tx.deleteCompacted(from, end, keep, s.opts.CompactionBatchLimit)
			return err
		})
		if err != nil {
			return fmt.Errorf("mvcc: compact at %d: %w", rev, err)
		}
		if next == nil {
			break
		}
		from = next
	}
	_, err := s.Write(func(tx *WriteTxn) error {
		tx.mustCommit = true
		tx.direct = true
		return putInt64(tx.tx.Bucket(metaBucket), metaFinishedCompact, rev)
	})
	return err
}

// deleteCompacted deletes up to limit revisions in [from, end) that are
// not in keep. It returns where to continue, or nil when the range is done.
func (t *WriteTxn) deleteCompacted(from, end []byte, keep map[kv.Revision]struct{}, limit int) ([]byte, error) {
	var doomed [][]byte
	var next []byte
	c := t.keys.Cursor()
	scanned := 0
	for k, _ := c.Seek(from); k != nil && bytes.Compare(k, end) < 0; k, _ = c.Next() {
		// Bound the work of one commit by what it deletes and by what it
		// reads, for histories where most revisions are kept.
		if len(doomed) == limit || scanned == 8*limit {
			next = bytes.Clone(k)
			break
		}
		scanned++
		rev, _, err := parseRevBytes(k)
		if err != nil {
			return nil, err
		}
		if _, ok := keep[rev]; !ok {
			doomed = append(doomed, bytes.Clone(k))
		}
	}
	for _, k := range doomed {
		if err := t.keys.Delete(k); err != nil {
			return nil, err
		}
	}
	// Deletions are not undoable and need committing like any write.
	t.mustCommit = t.mustCommit || len(doomed) > 0
	t.direct = t.direct || len(doomed) > 0
	return next, nil
}
