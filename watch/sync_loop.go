package watch

import (
	"errors"
	"slices"
	"time"

	"github.com/httpkv/httpkv/kv"
)

// syncLoop catches unsynced watchers up from the history. It runs a pass
// every SyncInterval, when a watcher becomes unsynced, and when a reader
// takes its queue; and it keeps running passes without waiting while they
// make progress, so a watcher far behind catches up as fast as it reads.
func (s *Store) syncLoop() {
	defer s.wg.Done()
	t := time.NewTicker(s.opts.SyncInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		case <-s.syncKick:
		}
		for s.syncPass() {
			select {
			case <-s.stop:
				return
			default:
			}
		}
	}
}

// syncTarget is one watcher of a sync pass, with the revision it needs
// next as of the pass's start.
type syncTarget struct {
	w    *watcher
	next int64
}

// syncPass serves up to MaxSyncWatchers unsynced watchers: it reads the
// history from the oldest revision any of them needs, and gives each its
// share. A read is bounded (the most room any target has), so one may
// stop short of watchers nearer the head: those get a read of their own
// in the same pass, from the oldest revision they need, and so on. A
// watcher far behind, whose reader takes a bounded share per pass, thus
// never holds up those just behind the head: a client resuming with
// Last-Event-ID is caught up at once, however slow others are. It
// reports whether any watcher advanced.
//
// Only the choosing and the sending hold mu; the read does not, so writes
// go on meanwhile. A compaction may land at any point:
//   - before the read: the read's snapshot shows the new compact revision
//     and every watcher needing history below it ends with a compacted
//     response;
//   - after the read: the snapshot already holds every event the watchers
//     need from their next revision, and they advance past it; one still
//     behind meets the compaction on its next pass.
//
// So no watcher ever skips from before a compaction to after it silently.
func (s *Store) syncPass() bool {
	// Choose.
	s.mu.Lock()
	upTo := s.notifiedRev
	var targets []syncTarget
	from := int64(-1)
	var most limits // the most room any target has
	for w := range s.unsynced {
		if len(targets) == s.opts.MaxSyncWatchers {
			break
		}
		events, bytes := w.room(s.limits())
		if events <= 0 || bytes <= 0 {
			continue // its reader is not reading: do not read for it
		}
		targets = append(targets, syncTarget{w: w, next: w.next})
		if from < 0 || w.next < from {
			from = w.next
		}
		most.events, most.bytes = max(most.events, events), max(most.bytes, bytes)
	}
	s.mu.Unlock()
	if len(targets) == 0 {
		return false // none has room, or the store is full
	}
	lim := s.limits()
	most = most.page(lim)
	// Each target may take a page: together, no more than the store has
	// room for, so that a pass serving many watchers far behind does not
	// take the store far past its bound.
	most.bytes = max(1, min(most.bytes, (lim.total-lim.pending)/int64(len(targets))))
	callHook(s.hooks.afterChoose)

	advanced := false
	for len(targets) > 0 {
		served, rest, ok := s.syncRead(targets, from, upTo, most)
		if !ok {
			break
		}
		advanced = advanced || served
		targets, from = rest, -1
		for _, t := range rest {
			if from < 0 || t.next < from {
				from = t.next
			}
		}
	}
	return advanced
}

// syncRead reads the history from from to upTo, bounded by most, and
// sends it to targets. It reports whether any advanced, and returns those
// the read stopped short of, untouched. ok is false if the store could
// not be read.
func (s *Store) syncRead(targets []syncTarget, from, upTo int64, most limits) (advanced bool, rest []syncTarget, ok bool) {
	// Read.
	events, readTo, compactRev, err := s.readHistory(from, upTo, most)
	if err != nil {
		// The store is closed or broken; the watchers stay unsynced.
		return false, nil, false
	}
	callHook(s.hooks.afterRead)
	// The page's keys and values are shared by every watcher given some
	// of it; each gets a slice of its own.
	sh := &share{}
	for i := range events {
		sh.size += eventSize(&events[i]) - eventOverhead
	}
	spans := make(map[[2]int][]kv.Event)

	// Send, and move those caught up to synced.
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range targets {
		w := t.w
		if w.group != groupUnsynced || w.next != t.next {
			continue // canceled meanwhile
		}
		if t.next < compactRev {
			s.remove(w)
			w.finish(kv.WatchResponse{Revision: s.notifiedRev, CompactRevision: compactRev})
			advanced = true
			continue
		}
		if t.next > readTo && readTo < upTo {
			rest = append(rest, t) // the read stopped short of it
			continue
		}
		if s.sendHistory(w, events, readTo, sh, spans) {
			advanced = true
		}
		if w.next > s.notifiedRev {
			delete(s.unsynced, w)
			s.becomeSynced(w)
		}
	}
	s.readBuf = doneWith(events)
	callHook(s.hooks.afterSend)
	return advanced, rest, true
}

func callHook(f func()) {
	if f != nil {
		f()
	}
}

// readHistory reads the events of revisions [from, upTo] from one view
// of the history, stopping after the first whole revision that reaches
// limit's events or bytes. It returns them, the last revision read in
// full, and the view's compact revision; watchers needing history below
// that one get nothing from it. (When from is below it, the read starts
// at it.)
func (s *Store) readHistory(from, upTo int64, limit limits) ([]kv.Event, int64, int64, error) {
	readTo := upTo
	if from > upTo {
		return nil, readTo, 0, nil
	}
	events := s.readBuf[:0]
	var size int64
	compactRev, err := s.history.ReadHistory(from, upTo, func(ev kv.Event) bool {
		rev := ev.KV.ModRevision
		if (len(events) >= limit.events || size >= limit.bytes) && rev != events[len(events)-1].KV.ModRevision {
			readTo = events[len(events)-1].KV.ModRevision
			return false
		}
		events = append(events, ev)
		size += eventSize(&ev)
		return true
	})
	if err != nil {
		s.readBuf = doneWith(events)
		return nil, 0, 0, err
	}
	return events, readTo, compactRev, nil
}

// maxKeptBuf bounds the events the sync loop's buffers keep between
// reads: a page of the default bounds fits; a rare huge revision's
// buffer goes.
const maxKeptBuf = DefaultQueueLimit

// doneWith drops what buf refers to, and returns it emptied for reuse,
// or nil if it grew too large to keep.
func doneWith(buf []kv.Event) []kv.Event {
	clear(buf)
	if cap(buf) > maxKeptBuf {
		return nil
	}
	return buf[:0]
}

// maxResponseEvents is the size at which catching up starts a new
// response; a single revision is never split, however large.
const maxResponseEvents = 256

// sendHistory offers w its share of events, whole revisions in order, from
// w.next up to readTo, as far as its queue takes them, and advances w.next
// past what it took; sh is the keys and values of events. A response
// that is a run of events as read, every one of it matching, is the same
// for every watcher given it (those of one key or prefix caught up
// together): they share one copy of it, kept in spans by its place in
// events, as the watchers of a published revision share its events (see
// notify), so that whatever encodes it downstream can encode it once.
// The caller holds mu. It reports whether w advanced.
func (s *Store) sendHistory(w *watcher, events []kv.Event, readTo int64, sh *share, spans map[[2]int][]kv.Event) bool {
	start := w.next
	// Responses are gathered in the loop's buffer and queued as copies of
	// their exact size: one allocation each, instead of a slice grown by
	// doubling for every response of every watcher caught up.
	batch := s.batchBuf[:0]
	defer func() { s.batchBuf = doneWith(batch) }()
	// batch is events[span[0]:span[1]] while run holds.
	var span [2]int
	run := false
	flush := func() bool {
		if len(batch) == 0 {
			return true
		}
		rev := batch[len(batch)-1].KV.ModRevision
		var evs []kv.Event
		// Previous versions are filled in place: such a watcher's events
		// are its own.
		if run && !w.prevKV {
			if evs = spans[span]; evs == nil {
				evs = slices.Clone(batch)
				spans[span] = evs
			}
		} else {
			evs = slices.Clone(batch)
		}
		c := charge{own: int64(len(batch)) * eventOverhead, sh: sh}
		n, ok := w.offer(kv.WatchResponse{Revision: rev, Events: evs}, c, s.limits())
		if !ok {
			s.noteRefused(c)
			return false
		}
		if n > 0 {
			s.queued(len(batch), c)
		}
		w.lastSent = time.Now().UnixNano()
		w.next = rev + 1
		batch = doneWith(batch)
		return true
	}
	for i := 0; i < len(events); {
		rev := events[i].KV.ModRevision
		j := i
		for j < len(events) && events[j].KV.ModRevision == rev {
			j++
		}
		if rev >= w.next {
			n := len(batch)
			// This revision's events that match: events[revSpan] if revRun.
			revSpan, revRun := [2]int{-1, -1}, true
			for k := i; k < j; k++ {
				if !w.matches(&events[k]) {
					continue
				}
				batch = append(batch, events[k])
				switch {
				case revSpan[0] < 0:
					revSpan = [2]int{k, k + 1}
				case k == revSpan[1]:
					revSpan[1]++
				default:
					revRun = false
				}
			}
			if len(batch) > n {
				switch {
				case n == 0:
					span, run = revSpan, revRun
				case run && revRun && revSpan[0] == span[1]:
					span[1] = revSpan[1]
				default:
					run = false
				}
			}
			if n > 0 && len(batch) > maxResponseEvents {
				full, fullSpan, fullRun := batch, span, run
				batch, span, run = batch[:n], [2]int{fullSpan[0], revSpan[0]}, fullRun
				if !flush() {
					batch, span, run = full, fullSpan, fullRun
					return w.next != start
				}
				// flush left batch empty, over full's array (or none);
				// full's tail is this revision's events.
				batch = append(batch, full[n:]...)
				clear(full[len(batch):])
				span, run = revSpan, revRun
			}
		}
		i = j
	}
	if !flush() {
		return w.next != start
	}
	if w.next <= readTo {
		w.next = readTo + 1
	}
	return w.next != start
}

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
