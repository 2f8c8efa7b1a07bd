package watch

import (
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
// of the history, stopping before a revision that would take it past
// limit's events or bytes: a page passes limit only by the events of a
// revision after its first, or with a first revision larger than limit.
// (Stopping after the revision that reaches limit instead gave one
// watcher, the store holding nothing else, a page of the store's whole
// bound plus one revision, which it admits whole.) It returns them, the last revision read in
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
		rev, n := ev.KV.ModRevision, eventSize(&ev)
		if len(events) > 0 && rev != events[len(events)-1].KV.ModRevision &&
			(len(events) >= limit.events || size+n > limit.bytes) {
			readTo = events[len(events)-1].KV.ModRevision
			return false
		}
		events = append(events, ev)
		size += n
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
