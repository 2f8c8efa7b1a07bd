package watch

import (
	"slices"
	"time"

	"github.com/httpkv/httpkv/kv"
)

// Publishing: a committed revision reaches the synced watchers it
// matches at once, and those that cannot take it become victims.

// Publish delivers revisions, oldest first, to the watchers that match
// them: the changes of a committed batch (mvcc calls it on its committer,
// as an mvcc.Observer), or what an upstream watch received. A revision at
// or below the last one published is ignored; one may follow another
// with a gap (a gateway's namespace has no events in most of a cluster's
// revisions), and a revision without events only moves the scheduler's
// revision on, as a progress notification does. Events are published
// without PrevKV: they are shared by every watcher they match, and those
// that asked for previous versions get them from the History. It never
// blocks on a reader; after Close it does nothing.
func (s *Store) Publish(changes []kv.Changes) {
	s.mu.Lock()
	unlocked := false
	defer func() {
		if !unlocked {
			s.mu.Unlock()
		}
	}()
	if s.closed {
		return
	}
	for i := range changes {
		ch := &changes[i]
		if ch.Revision <= s.notifiedRev {
			continue
		}
		s.notify(ch)
		s.notifiedRev = ch.Revision
	}
	// Readers are woken once every revision of the commit is queued, not
	// at the first: a reader woken at the first, on the other processor,
	// would write it alone, then wake and write again for each of the
	// rest. With many watchers of a busy prefix that was a write per
	// watcher per revision instead of per commit.
	for _, w := range s.waking {
		w.waking = false
		w.wake()
	}
	clear(s.waking)
	s.waking = s.waking[:0]
	s.mu.Unlock()
	unlocked = true
	s.notes.flush()
}

// maxKeptMatched bounds the list of one event's watchers that notify
// keeps between revisions (128 KiB of pointers): a key with more
// watchers than that gets a new list each time.
const maxKeptMatched = 16 << 10

// victim is the revision a victim could not take, held for it until
// the victim loop delivers it, and what it counts against the store's
// bound.
type victim struct {
	r kv.WatchResponse
	c charge
}

// notify offers one revision's events to the synced watchers they match.
//
// The watchers that take the revision whole, as it is (all its events,
// without previous versions, as most watchers of a key or a prefix do),
// share one copy of its events; the others get a slice of their own.
// All refer to the same keys and values: that is the revision's share,
// counted once against MaxPendingBytes however many watchers hold it
// (see share), and each own slice is counted for its watcher.
func (s *Store) notify(ch *kv.Changes) {
	rev := ch.Revision
	now := time.Now().UnixNano()
	sh := &share{}
	for i := range ch.Events {
		sh.size += eventSize(&ch.Events[i]) - eventOverhead
	}
	deliver := func(w *watcher, evs []kv.Event, c charge) {
		if w.next > rev {
			return // a watcher starting in the future
		}
		r := kv.WatchResponse{Revision: rev, Events: evs}
		n, ok := w.queueUp(r, c, s.limits())
		if ok {
			if n > 0 {
				s.queued(len(evs), c)
			}
			w.next, w.lastSent = rev+1, now
			if !w.waking {
				w.waking = true
				s.waking = append(s.waking, w)
			}
			return
		}
		s.synced.remove(w)
		w.next = rev
		s.noteRefused(c)
		if !w.canHold(len(evs), n, c, s.limits()) {
			// Too large to hold: replay it from history later.
			w.group = groupUnsynced
			s.unsynced[w] = struct{}{}
			return
		}
		w.group = groupVictim
		s.victims[w] = victim{r: r, c: c}
		s.hold(c)
	}
	// whole is the revision's events as every watcher taking them whole
	// shares them; made for the first such watcher.
	var whole []kv.Event
	takeWhole := func(w *watcher) {
		if whole == nil {
			whole = slices.Clone(ch.Events)
			sh.size += int64(len(whole)) * eventOverhead
		}
		deliver(w, whole, charge{sh: sh})
	}
	own := func(w *watcher, evs []kv.Event) {
		deliver(w, evs, charge{own: int64(len(evs)) * eventOverhead, sh: sh})
	}
	if len(ch.Events) == 1 {
		ev := &ch.Events[0]
		ws := s.matched[:0]
		defer func() {
			clear(ws)
			if cap(ws) <= maxKeptMatched {
				s.matched = ws[:0]
			}
		}()
		s.synced.matching(ev.KV.Key, func(w *watcher) {
			if w.matches(ev) {
				ws = append(ws, w)
			}
		})
		// With thousands of watchers of a key, one allocation instead of
		// one each. (Those that asked for previous versions get theirs
		// filled in, so each gets its own.) Their list is kept for the
		// next revision: growing it anew for each was 7 % of what
		// fanning out to a thousand watchers allocated.
		// Those taking the events whole first: the first of them sizes
		// the share, which a watcher's reader may read once it holds
		// it, so it must not grow after a delivery.
		for _, w := range ws {
			if !w.prevKV {
				takeWhole(w)
			}
		}
		for _, w := range ws {
			if w.prevKV {
				own(w, []kv.Event{*ev})
			}
		}
		return
	}
	per := make(map[*watcher][]kv.Event)
	var order []*watcher
	for i := range ch.Events {
		ev := &ch.Events[i]
		s.synced.matching(ev.KV.Key, func(w *watcher) {
			if !w.matches(ev) {
				return
			}
			if _, seen := per[w]; !seen {
				order = append(order, w)
			}
			per[w] = append(per[w], *ev)
		})
	}
	// Whole first, as above: the share is sized before any delivery.
	whole1 := func(w *watcher) bool { return len(per[w]) == len(ch.Events) && !w.prevKV }
	for _, w := range order {
		if whole1(w) {
			takeWhole(w)
		}
	}
	for _, w := range order {
		if !whole1(w) {
			own(w, per[w])
		}
	}
}
