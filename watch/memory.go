package watch

import (
	"sync/atomic"

	"github.com/httpkv/httpkv/kv"
)

// What the store holds for watchers, and how it is counted against each
// watcher's bounds (Options.QueueLimit events, Options.QueueBytes bytes).

// limits bound what the store holds for one watcher: events queued, and
// bytes queued, held by the reader or held as a victim; and, for all
// watchers together, bytes: pending is what the store held when the
// limits were taken, total its bound (Options.MaxPendingBytes).
type limits struct {
	events int
	bytes  int64

	pending, total int64
}

// full reports whether the store holds as much as it may for all its
// watchers: past it, no watcher is given anything more in memory.
func (l limits) full() bool { return l.pending >= l.total }

// admits reports whether the store may hold marginal bytes more for all
// its watchers: they fit within the bound, or it holds nothing at all,
// so that a revision larger than the bound still goes through, one at a
// time.
func (l limits) admits(marginal int64) bool {
	return l.pending == 0 || l.pending+marginal <= l.total
}

// page bounds one read of the history for watchers with room l, under
// bounds lim (its events and bytes; the store's are not its concern): at
// most half of lim, so that a reader writing out one page (which counts
// against its bound until it releases it) leaves room for the next to be
// read and queued meanwhile. With whole-bound pages a watcher far behind
// was caught up in turns, reading then writing, each waiting for the
// other. A page holds one revision at least, however large.
func (l limits) page(lim limits) limits {
	return limits{
		events: max(1, min(l.events, lim.events/2)),
		bytes:  max(1, min(l.bytes, lim.bytes/2)),
	}
}

// share is memory that responses queued for several watchers hold
// together: the keys and values of a published revision (and the slice
// of its events, when watchers take it whole), or of a page read from
// the history. The store counts it once against MaxPendingBytes, while
// any watcher holds a response that refers to it: ten thousand watchers
// of one key hold one copy of its value, not ten thousand.
type share struct {
	size int64
	refs atomic.Int32
}

// charge is what one response held for a watcher counts against the
// store's bound for all watchers: bytes of its own (the slice of events
// made for this watcher, previous versions loaded for it) and a share
// it holds with others, if any. Against the watcher's own bound, the
// response counts whole (responseSize), whoever else holds its share.
type charge struct {
	own int64
	sh  *share
}

// marginal is what holding c would add to what the store holds: its own
// bytes, and its share's unless another watcher holds it already.
func (c charge) marginal() int64 {
	if c.sh != nil && c.sh.refs.Load() == 0 {
		return c.own + c.sh.size
	}
	return c.own
}

// hold counts c as held by the store: for a queued response, a taken
// one, or a victim's.
func (s *Store) hold(c charge) {
	n := c.own
	if c.sh != nil && c.sh.refs.Add(1) == 1 {
		n += c.sh.size
	}
	if n != 0 {
		s.pendingBytes.Add(n)
	}
}

// unhold stops counting c; its share comes off once no watcher holds it.
func (s *Store) unhold(c charge) {
	n := c.own
	if c.sh != nil && c.sh.refs.Add(-1) == 0 {
		n += c.sh.size
	}
	if n != 0 {
		s.pendingBytes.Add(-n)
	}
}

// eventOverhead approximates what an event costs beyond its key and
// value: the Event itself, its place in a response's slice.
const eventOverhead = 128

// eventSize is what the store counts an event as holding.
func eventSize(ev *kv.Event) int64 {
	n := int64(eventOverhead + len(ev.KV.Key) + len(ev.KV.Value))
	if ev.PrevKV != nil {
		n += int64(len(ev.PrevKV.Key) + len(ev.PrevKV.Value))
	}
	return n
}

// responseSize is the size of a response's events.
func responseSize(r *kv.WatchResponse) int64 {
	var n int64
	for i := range r.Events {
		n += eventSize(&r.Events[i])
	}
	return n
}

// limits returns the bounds of one watcher, with what the store holds
// for all of them now.
func (s *Store) limits() limits {
	return limits{
		events:  s.opts.QueueLimit,
		bytes:   s.opts.QueueBytes,
		pending: s.pendingBytes.Load(),
		total:   s.opts.MaxPendingBytes,
	}
}

// noteRefused notes that a response charging c was refused, if for want
// of room within the store's bound: readers that are not reading are then
// given back what they were queued (evictStalled).
func (s *Store) noteRefused(c charge) {
	if !s.limits().admits(c.marginal()) {
		s.crowded.Store(true)
	}
}

// queued counts a response newly queued for a watcher.
func (s *Store) queued(events int, c charge) {
	s.pendingEvents.Add(int64(events))
	s.hold(c)
}

// Stats are watcher figures for status pages and metrics.
type Stats struct {
	Synced, Unsynced, Victims int
	PendingEvents             int64 // events queued or held, not yet read
	// PendingBytes is what the store holds for watchers, as counted
	// against MaxPendingBytes: events queued, held by victims, and taken
	// by readers not yet released, what several watchers share counted
	// once.
	PendingBytes int64
	EventsSent   int64 // events read by watchers since start
	// Evictions counts the times the store, full, gave back what was
	// queued for a watcher whose reader was not taking it.
	Evictions int64
}

// Stats returns current figures.
func (s *Store) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stats{
		Synced:        s.synced.len(),
		Unsynced:      len(s.unsynced),
		Victims:       len(s.victims),
		PendingEvents: s.pendingEvents.Load(),
		PendingBytes:  s.pendingBytes.Load(),
		EventsSent:    s.eventsSent.Load(),
		Evictions:     s.evictions.Load(),
	}
	for _, v := range s.victims {
		st.PendingEvents += int64(len(v.r.Events))
	}
	return st
}
