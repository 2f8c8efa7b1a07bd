package watch

import (
	"sync"
	"time"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
)

// group says which of the store's groups a watcher is in.
type group int

const (
	groupNone group = iota
	groupSynced
	groupUnsynced
	groupVictim
)

// watcher is the store's side of one watch. Fields above mu are fixed at
// creation or guarded by the store's mu; those below by the watcher's own.
type watcher struct {
	r        keyrange.Range
	prevKV   bool
	noPut    bool
	noDelete bool
	progress bool

	// Guarded by Store.mu.
	next     int64 // the first revision not yet queued
	group    group
	lastSent int64 // unix nanoseconds of the last response queued
	// waking is set while the watcher is on the store's list of those
	// to signal once the revisions being published are all queued.
	waking bool

	// mu guards the queue between the store and the reader. Lock order:
	// Store.mu, then watcher.mu.
	mu    sync.Mutex
	queue []kv.WatchResponse
	// queueBox is what queue came in from the pool of queues (nil when
	// it did not), to go back in: see getQueue.
	queueBox    *[]kv.WatchResponse
	charges     []charge // what each response of queue counts for all watchers
	queued      int      // events in queue
	queuedBytes int64    // their size (see eventSize)
	// heldBytes is the size of what the reader took with Next and has not
	// released: still in memory (an HTTP stream writing it to a slow
	// client), so still counted against the bound; held is what it
	// counts against the store's bound for all watchers.
	heldBytes int64
	held      []charge
	// queuedAt is when the queue last went from empty to not (unix
	// nanoseconds): a reader that takes what is queued at once is
	// reading; one that leaves it there is not (see Store.evictStalled).
	queuedAt int64
	// stalled is set when the store gave back what was queued for the
	// watcher because its reader was not taking it, and cleared when the
	// reader next takes: meanwhile the watcher is given nothing.
	stalled bool
	done    bool
	// ready is signalled when queue becomes non-empty or done; notify,
	// when set, is called instead (and ready is nil), through notes.
	ready  chan struct{}
	notify func()
	notes  *notes
}

// matches reports whether ev is for this watcher.
func (w *watcher) matches(ev *kv.Event) bool {
	if ev.Type == kv.EventPut && w.noPut || ev.Type == kv.EventDelete && w.noDelete {
		return false
	}
	return w.r.Contains(ev.KV.Key)
}

// offer queues r unless that would take the watcher past lim, and
// signals the reader. c is what r counts against the store's bound for
// all watchers (see fits). It returns r's size and whether it was
// queued; the caller counts c as held if it was.
func (w *watcher) offer(r kv.WatchResponse, c charge, lim limits) (int64, bool) {
	n, ok := w.queueUp(r, c, lim)
	if ok {
		w.signal()
	}
	return n, ok
}

// queueUp is offer without the signal: the caller signals the reader
// once it has queued all it will for now. A response queued for a
// watcher that is done is dropped: ok, and nothing to count (n is 0).
func (w *watcher) queueUp(r kv.WatchResponse, c charge, lim limits) (n int64, ok bool) {
	n = responseSize(&r)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return 0, true // nobody reads any more; drop silently
	}
	if !w.fits(len(r.Events), n, c, lim) {
		return n, false
	}
	if len(w.queue) == 0 {
		w.queuedAt = time.Now().UnixNano()
		if w.queue == nil {
			w.queue, w.queueBox = getQueue()
		}
	}
	w.queue = append(w.queue, r)
	w.charges = append(w.charges, c)
	w.queued += len(r.Events)
	w.queuedBytes += n
	return n, true
}

// fits reports whether a response of events and n bytes, charging c for
// all watchers, may be queued under lim. Against the watcher's own
// bounds a watcher holding nothing (nothing queued, nothing held by its
// reader) always takes it, so that a revision larger than them still
// gets through; against the store's bound for all watchers, none does
// once it would pass it (see limits.admits): otherwise every watcher of
// a crowd, each holding nothing, would take one more revision past it.
// The caller holds mu.
func (w *watcher) fits(events int, n int64, c charge, lim limits) bool {
	if w.stalled || !lim.admits(c.marginal()) {
		return false
	}
	held := w.queuedBytes + w.heldBytes
	if w.queued == 0 && held == 0 {
		return true
	}
	return w.queued+events <= lim.events && held+n <= lim.bytes
}

// canHold reports whether the store may hold a revision of this many
// events and bytes, charging c, for the watcher as a victim: within
// lim, counting what it holds already, and what the store holds for all.
func (w *watcher) canHold(events int, n int64, c charge, lim limits) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return events <= victimBatchLimit && w.queuedBytes+w.heldBytes+n <= lim.bytes && lim.pending+c.marginal() <= lim.total
}

// room reports how many events and bytes the watcher can take before lim:
// none when the store is full, whatever the watcher holds, or while its
// reader is stalled.
func (w *watcher) room(lim limits) (int, int64) {
	if lim.full() {
		return 0, 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stalled {
		return 0, 0
	}
	held := w.queuedBytes + w.heldBytes
	if w.queued == 0 && held == 0 {
		return lim.events, lim.bytes
	}
	return lim.events - w.queued, lim.bytes - held
}

// empty reports whether nothing is queued, events or otherwise.
func (w *watcher) empty() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.queue) == 0
}

// finish queues a final response and marks the watcher done. Responses
// queued before it stay, for the reader to take first.
func (w *watcher) finish(r kv.WatchResponse) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return
	}
	w.queue = append(w.queue, r)
	w.charges = append(w.charges, charge{})
	w.done = true
	w.signal()
}

// drop empties the queue of a canceled watcher but for its final
// response, and forgets what its reader took; it returns how many
// events were queued, and what the queue and the reader held against
// the store's bound.
func (w *watcher) drop() (int, []charge) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.queued
	cs := w.held
	if len(w.queue) > 0 {
		last := len(w.queue) - 1
		cs = append(cs, w.charges[:last]...)
		w.queue, w.charges = w.queue[last:], w.charges[last:]
	}
	w.held = nil
	w.queued, w.queuedBytes, w.heldBytes = 0, 0, 0
	return n, cs
}

// unqueue empties the queue of a watcher that is to catch up from
// history again (Store.rewind): it returns the responses, how many
// events they held and what they counted against the store's bound.
func (w *watcher) unqueue() ([]kv.WatchResponse, int, []charge) {
	w.mu.Lock()
	defer w.mu.Unlock()
	q, n, cs := w.queue, w.queued, w.charges
	w.queue, w.queueBox, w.charges = nil, nil, nil
	w.queued, w.queuedBytes = 0, 0
	return q, n, cs
}

// stall marks the watcher stalled if what is queued for it, events or a
// victim's revision, has waited since before since, and reports the
// revision of the first event queued (0 when only a victim's revision
// waits).
func (w *watcher) stall(since int64) (from int64, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done || w.stalled || w.group == groupNone || w.queuedAt > since {
		return 0, false
	}
	victim := w.group == groupVictim
	if w.queuedBytes == 0 && !victim {
		return 0, false
	}
	for _, r := range w.queue {
		if len(r.Events) > 0 {
			from = r.Events[0].KV.ModRevision
			break
		}
	}
	w.stalled = true
	return from, true
}

// exclusive returns what the reader took and has not released that no
// other watcher holds: its own bytes, and shares held by it alone.
func (w *watcher) exclusive() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	var n int64
	for _, c := range w.held {
		n += c.own
		if c.sh != nil && c.sh.refs.Load() == 1 {
			n += c.sh.size
		}
	}
	return n
}

// signal wakes the reader: its Ready channel, or its Notify function,
// which notes calls once no lock of the store's is held.
func (w *watcher) signal() {
	if w.notify != nil {
		w.notes.add(w.notify, true)
		return
	}
	select {
	case w.ready <- struct{}{}:
	default:
	}
}

// wake is signal for Publish, which calls the Notify functions itself
// once it has queued all it publishes and let go of the store's lock.
func (w *watcher) wake() {
	if w.notify != nil {
		w.notes.add(w.notify, false)
		return
	}
	w.signal()
}

// take empties the queue. What it returns counts as held by the reader
// until release; the reader may give the slice back with putQueue, in
// box, once it is done with it. It clears the watcher's stalled mark,
// and reports whether it was set.
func (w *watcher) take() (q []kv.WatchResponse, box *[]kv.WatchResponse, stalled bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	q, box, stalled = w.queue, w.queueBox, w.stalled
	w.queueBox = nil
	w.stalled = false
	w.heldBytes += w.queuedBytes
	w.held = append(w.held, w.charges...)
	clear(w.charges)
	w.queue, w.charges, w.queued, w.queuedBytes = nil, w.charges[:0], 0, 0
	return q, box, stalled
}

// hold counts n more bytes as held by the reader (previous versions
// loaded for what it took): its own, for the store's bound too.
func (w *watcher) hold(n int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.heldBytes += n
	w.held = append(w.held, charge{own: n})
}

// release stops counting what the reader took, calling unhold for each
// charge of it; it reports whether there was any.
func (w *watcher) release(unhold func(charge)) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	had := w.heldBytes > 0 || len(w.held) > 0
	for _, c := range w.held {
		unhold(c)
	}
	clear(w.held)
	w.heldBytes, w.held = 0, w.held[:0]
	return had
}

// queues lends watchers the slices their responses are queued in, and
// takes them back from readers that have written what they took
// (Stream.Release). A stream of a busy prefix takes tens of revisions at
// once, and growing a new queue by doubling for every take was most of
// what fanning out to a thousand such streams allocated. An idle watcher
// holds none.
var queues sync.Pool

// maxPooledQueue bounds the responses a queue given back may hold room
// for: a rare long one (a reader that fell far behind) is not kept.
const maxPooledQueue = 256

// getQueue lends an empty queue, and the box it came in, which goes
// back into the pool with it, so that giving it back allocates nothing;
// nil and nil when none is left to lend.
func getQueue() ([]kv.WatchResponse, *[]kv.WatchResponse) {
	if box, ok := queues.Get().(*[]kv.WatchResponse); ok {
		q := *box
		*box = nil // the queue may grow away from it
		return q, box
	}
	return nil, nil
}

// putQueue takes back a queue take returned, in the box it came in
// (nil: a new one), once its reader is done with it; the responses it
// held are cleared, so that it keeps no events alive.
func putQueue(q []kv.WatchResponse, box *[]kv.WatchResponse) {
	if cap(q) == 0 || cap(q) > maxPooledQueue {
		return
	}
	clear(q)
	if box == nil {
		box = new([]kv.WatchResponse)
	}
	*box = q[:0]
	queues.Put(box)
}
