package watch

import "github.com/httpkv/httpkv/kv"

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
// watchers: past it, only a watcher holding nothing takes more.
func (l limits) full() bool { return l.pending >= l.total }

// page bounds one read of the history for watchers with room l, under
// bounds lim (its events and bytes; the store's are not its concern):
// one revision when the store is full, else at most half of lim, so that a reader writing out one page
// (which counts against its bound until it releases it) leaves room for
// the next to be read and queued meanwhile. With whole-bound pages a
// watcher far behind was caught up in turns, reading then writing, each
// waiting for the other.
func (l limits) page(lim limits) limits {
	if lim.full() {
		// Only watchers holding nothing take anything: one revision each.
		return limits{events: 1, bytes: 1}
	}
	return limits{
		events: max(1, min(l.events, lim.events/2)),
		bytes:  max(1, min(l.bytes, lim.bytes/2)),
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

// queued counts a response newly queued for a watcher.
func (s *Store) queued(events int, n int64) {
	s.pendingEvents.Add(int64(events))
	s.pendingBytes.Add(n)
}

// Stats are watcher figures for status pages and metrics.
type Stats struct {
	Synced, Unsynced, Victims int
	PendingEvents             int64 // events queued or held, not yet read
	// PendingBytes is what the store holds for watchers, as counted
	// against QueueBytes: events queued, held by victims, and taken by
	// readers not yet released.
	PendingBytes int64
	EventsSent   int64 // events read by watchers since start
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
	}
	for _, r := range s.victims {
		st.PendingEvents += int64(len(r.Events))
	}
	return st
}
