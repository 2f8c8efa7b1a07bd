package mvcc

// Memory that mirrors the data file (the compact revision, the lessor's
// leases and their keys, auth's users and roles, a disarmed alarm) must
// never run ahead of it: if a commit fails, a lease granted in memory but
// not on disk would be served until a restart forgets it. So a write does
// not change such memory itself; it stages the change, and the committer
// applies it only once the batch holding the write is durable, before
// the batch's writers are answered and its observers told. This is the
// one rule for such memory, whoever owns it (mvcc, lease, auth).
//
// A staged change has two halves: apply, run after the batch's commit
// succeeded, and undo, run instead when the request that staged it fails
// (its writes are undone) or the commit fails. Later requests of the same
// batch must still see what earlier ones did (a lease granted, then put
// with, in one batch), so the owner of the memory keeps a view of the open
// batch beside the committed state: undo takes the change back out of
// that view, apply moves it into the committed state. For the compact
// revision that view is stagedCompactRev; for leases it is the lessor's,
// and LeaseKeys.
//
// For example, a batch of three requests — grant lease 7, put k with lease
// 7, then a request that grants lease 8 and fails — stages: grant 7 (by
// request 1), attach k to 7 (request 2), grant 8 (request 3). Request 3's
// failure runs its undo at once; the commit then applies grant 7 and
// attach k to 7, in that order. Had the commit failed, the undos of grant
// 7 and of the attachment would have run, newest first, and memory would
// be as before the batch.

// stage is one staged change.
type stage struct {
	apply, undo func()
}

// Stage registers a change of memory that mirrors this request's writes:
// apply runs on the committer once the batch holding the request has been
// committed, after the applies staged before it (by earlier requests of
// the batch, and by this one); undo, if not nil, runs instead when this
// request fails or the batch's commit fails, newest first. Neither may
// block or call the Store's methods.
func (t *WriteTxn) Stage(apply, undo func()) {
	t.stages = append(t.stages, stage{apply: apply, undo: undo})
}

// undoStages runs the undos of stages, newest first.
func undoStages(stages []stage) {
	for i := len(stages) - 1; i >= 0; i-- {
		if u := stages[i].undo; u != nil {
			u()
		}
	}
}

// applyStages runs the applies of stages, oldest first.
func applyStages(stages []stage) {
	for _, st := range stages {
		st.apply()
	}
}

// Committer makes a batch durable. The store calls Commit with the
// function that does it: appends the batch to the write-ahead log and
// fdatasyncs it, or commits bbolt's write transaction (writes the pages,
// then fsyncs data and meta: a checkpoint, see checkpoint). It takes any
// error Commit returns as a failed commit: nothing of the batch is
// acknowledged, nothing it staged is applied, and the store refuses
// further writes until it is reopened.
//
// It is the seam around the commit for fault tests: a Committer that
// fails without calling commit is a write error (nothing reaches the
// file); one that calls commit and then fails anyway is an fsync error
// after the data may have reached the disk. Open takes it; nil commits
// directly.
type Committer interface {
	Commit(commit func() error) error
}

// commitBatch commits tx through the configured Committer. A Committer
// that failed without committing leaves tx open: roll it back.
func (s *Store) commitBatch(commit, rollback func() error) error {
	if s.committer == nil {
		return commit()
	}
	err := s.committer.Commit(commit)
	if err != nil {
		_ = rollback() // bbolt's ErrTxClosed if commit ran
	}
	return err
}
