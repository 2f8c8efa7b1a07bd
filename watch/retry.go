package watch

import (
	"errors"
	"slices"
	"time"

	"github.com/httpkv/httpkv/kv"
)

// Besides catching up from history (sync_loop.go), the scheduler retries
// victims, sends progress bookmarks, fills in previous versions, and
// puts a watcher back behind when what it was given must be replayed.

// victimLoop retries delivery to victims. A victim that takes its pending
// revision returns to synced if nothing happened since, or to unsynced.
func (s *Store) victimLoop() {
	defer s.wg.Done()
	t := time.NewTicker(s.opts.VictimInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		s.retryVictims()
	}
}

func (s *Store) retryVictims() {
	s.mu.Lock()
	defer s.mu.Unlock()
	kick := false
	for w, v := range s.victims {
		// What the victim holds is counted already: queued instead, it
		// adds nothing. (Its share is held by the victim: not counted
		// again either.)
		r := v.r
		lim := s.limits()
		lim.pending -= v.c.own
		n, ok := w.offer(r, v.c, lim)
		if !ok {
			continue
		}
		if n > 0 {
			s.queued(len(r.Events), v.c)
		}
		s.unhold(v.c)
		delete(s.victims, w)
		w.next, w.lastSent = r.Revision+1, time.Now().UnixNano()
		if w.next > s.notifiedRev {
			s.becomeSynced(w)
		} else {
			w.group = groupUnsynced
			s.unsynced[w] = struct{}{}
			kick = true
		}
	}
	// On-demand progress waits for a future watcher to reach its start.
	for w := range s.progressPending {
		if w.group == groupSynced && w.next <= s.notifiedRev+1 {
			s.sendProgress(w)
		}
	}
	if kick {
		s.kickSync()
	}
}

// progressLoop sends progress responses to idle watchers that asked for
// them: synced (so every event up to the revision was queued before),
// with nothing queued (so a reader that stops reading finds one progress
// waiting, not one per interval), and not starting in the future.
func (s *Store) progressLoop() {
	defer s.wg.Done()
	interval := s.opts.ProgressInterval
	t := time.NewTicker(min(interval, time.Second))
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		now := time.Now()
		if s.crowded.Swap(false) || s.limits().full() {
			s.evictStalled(now.UnixNano())
		}
		idleSince := now.Add(-interval).UnixNano()
		s.mu.Lock()
		for w := range s.progressing {
			if w.group == groupSynced && w.lastSent <= idleSince && w.next <= s.notifiedRev+1 && w.empty() {
				s.sendProgress(w)
			}
		}
		s.mu.Unlock()
	}
}

// maxFills bounds the readers loading previous versions at once. Each
// looks at the store's room first and counts what it loaded after, so
// that together they pass MaxPendingBytes by no more than this many
// loads, however many readers take at the same moment.
const maxFills = 4

// fillPrevKVs adds to each event the key's version before it. If one is no
// longer in the history, the responses end there with a compacted one.
// Previous versions are the watcher's own, loaded for it: when others
// hold as much as the store's bound already, the watcher gives back what
// it took and catches up from history once there is room (rewind).
func (s *Store) fillPrevKVs(w *watcher, rs []kv.WatchResponse) []kv.WatchResponse {
	var evs []*kv.Event
	final := false
	for i := range rs {
		final = final || rs[i].CompactRevision != 0 || rs[i].Canceled
		for j := range rs[i].Events {
			evs = append(evs, &rs[i].Events[j])
		}
	}
	if len(evs) == 0 {
		return rs
	}
	s.fills <- struct{}{}
	defer func() { <-s.fills }()
	if !final && s.pendingBytes.Load()-w.exclusive() >= s.opts.MaxPendingBytes {
		return s.rewind(w, rs)
	}
	filled, err := s.history.FillPrevKVs(evs)
	// The previous versions are held by the reader with the events.
	var held int64
	for _, ev := range evs[:filled] {
		if ev.PrevKV != nil {
			held += int64(len(ev.PrevKV.Key) + len(ev.PrevKV.Value))
		}
	}
	if held > 0 {
		w.hold(held)
		s.pendingBytes.Add(held)
	}
	if err == nil {
		return rs
	}
	var ce *kv.CompactedError
	if !errors.As(err, &ce) {
		return []kv.WatchResponse{{Canceled: true, CancelReason: "store closed"}}
	}
	// End before the response holding the first event without its
	// previous version.
	i := 0
	for n := filled; n >= len(rs[i].Events); i++ {
		n -= len(rs[i].Events)
	}
	return append(rs[:i:i], kv.WatchResponse{Revision: s.rev(), CompactRevision: ce.CompactRevision})
}

// rewind gives back what the reader of w took (rs, none of them final),
// from its first response of events on, and makes w catch up from there
// from history, as a watcher past its bounds does: w holds nothing in
// memory meanwhile. It returns the responses before those (progress
// only), which the reader keeps.
func (s *Store) rewind(w *watcher, rs []kv.WatchResponse) []kv.WatchResponse {
	i := slices.IndexFunc(rs, func(r kv.WatchResponse) bool { return len(r.Events) > 0 })
	dropped, progress := 0, false
	for _, r := range rs[i:] {
		dropped += len(r.Events)
		progress = progress || r.Progress
	}
	s.eventsSent.Add(-int64(dropped))
	s.mu.Lock()
	if w.group != groupNone { // else it ended meanwhile: its final comes next
		s.requeue(w, rs[i].Events[0].KV.ModRevision, progress)
	}
	s.mu.Unlock()
	w.release(s.unhold)
	return rs[:i:i]
}

// requeue drops what the store holds for w, queued or as a victim, and
// makes it catch up from history from revision from on (or its next
// revision, if from is 0): w is unsynced, holding nothing. progress says
// a progress response was dropped already, which w is owed once caught
// up. The caller holds mu.
func (s *Store) requeue(w *watcher, from int64, progress bool) {
	switch w.group {
	case groupSynced:
		s.synced.remove(w)
	case groupVictim:
		s.unhold(s.victims[w].c)
		delete(s.victims, w)
	}
	q, n, cs := w.unqueue()
	s.pendingEvents.Add(-int64(n))
	for _, c := range cs {
		s.unhold(c)
	}
	for _, r := range q {
		progress = progress || r.Progress
	}
	if from > 0 {
		w.next = from
	}
	w.group = groupUnsynced
	s.unsynced[w] = struct{}{}
	if progress {
		s.progressPending[w] = struct{}{}
	}
	s.kickSync()
}

// stallAfter is how long what is queued for a watcher may wait for its
// reader, while the store is full, before it is given back: a reader
// that is reading takes its queue at once.
const stallAfter = time.Second

// evictStalled runs while the store is full, or has refused a response
// for want of room since it last ran. It gives back what is
// queued (and held as a victim) for every watcher whose reader has left
// it there for stallAfter, and marks those watchers stalled: each
// catches up from history from its first revision given back, once its
// reader takes again. Readers that read then find room, instead of
// waiting on those that do not until their connections are cut. (What a
// reader has taken it is writing out; that stays counted until it is
// released.)
func (s *Store) evictStalled(now int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for w := range s.all {
		if from, ok := w.stall(now - int64(stallAfter)); ok {
			if from == 0 && w.group == groupVictim {
				from = s.victims[w].r.Revision
			}
			s.requeue(w, from, false)
			s.evictions.Add(1)
			// Its reader, once it takes again, clears the mark (Next).
			w.signal()
		}
	}
}

// rev returns the scheduler's revision: the newest published.
func (s *Store) rev() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.notifiedRev
}
