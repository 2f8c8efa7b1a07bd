package watch

// Lost tells the scheduler that the revisions below rev it has not been
// published can no longer be: a gateway's upstream watch found them
// compacted when it came back. Synced watchers that still need one of
// them (their next revision is below rev) become unsynced, so that the
// sync loop ends them with a compacted response from the History, whose
// compact revision is then at least rev. Revisions from rev on are
// published as usual; those below it are not (the scheduler's revision
// moves to rev-1).
func (s *Store) Lost(rev int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	moved := false
	for w := range s.all {
		if w.group == groupSynced && w.next < rev {
			s.synced.remove(w)
			w.group = groupUnsynced
			s.unsynced[w] = struct{}{}
			moved = true
		}
	}
	// No synced watcher is owed a revision below rev now: the others
	// start at rev or after.
	s.notifiedRev = max(s.notifiedRev, rev-1)
	if moved {
		s.kickSync()
	}
}
