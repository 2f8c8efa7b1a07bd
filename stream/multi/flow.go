package multi

import (
	"runtime"
	"time"

	"github.com/httpkv/httpkv/stream"
)

// Flow control of a stream of many watchers: what it holds is bounded,
// whatever the number of its watchers and however its reader reads.
//
// The collector takes what ready watchers have into pending, up to
// BufferBytes. Past it, a ready watcher is deferred: it is not taken, and
// what it has waits in the backend, under the backend's own bound per
// watch (past which the backend replays it from history, as for a single
// watch), until the connection takes pending; then deferred watchers are
// ready again, oldest first. A reader that is away, or makes no progress
// for stallAfter (its write of what it took does not end, or what is
// pending is not taken), gets them parked instead: their
// backend watches are closed, which frees what the backend held for them,
// and they are watched again from their next revision once the reader
// takes pending again, a few at first and twice as many each time nothing
// had to be parked since (as a congestion window opens), so that a
// reader catching up from history is not sent more than it takes.

// stallAfter is how long a reader may make no progress, while watchers
// wait for room, before they are parked.
const stallAfter = time.Second

// minUnpark is how many parked watchers a take watches again at least.
const minUnpark = 16

// maxKeptBuffer bounds the buffer a busy stream keeps between its writes,
// so that it does not grow one anew for each; an idle stream keeps none.
const maxKeptBuffer = 16 << 20

// streamFlow is what waits for room in pending. Guarded by the stream's mu.
type streamFlow struct {
	deferred   []*streamWatcher // ready, not taken, oldest first
	parked     []*streamWatcher // oldest first; some may be stale (watched again since)
	unparkN    int              // how many unpark watched again last time
	parkedNow  bool             // a watcher was parked since the last take
	tookAt     time.Time        // when a connection last took pending
	writing    bool             // the connection is writing what it took
	since      time.Time        // when pending last went from empty to not
	spare      *streamBuffer    // a busy stream's buffer, kept between writes
	writingCap int64            // the capacity of the buffer the connection is writing
	hint       int              // the size of recent takes, decaying: what a new buffer is made for
}

// run is the stream's collector: it takes what ready watchers have,
// parks deferred ones when the reader stalls, and rechecks permissions
// when users or roles change, until the stream is gone. The registry owns
// it and waits for it.
func (ms *Stream) run(authChanged <-chan struct{}) {
	defer ms.reg.wg.Done()
	var batch []*streamWatcher
	stall := time.NewTimer(stallAfter)
	stall.Stop()
	defer stall.Stop()
	for {
		select {
		case <-ms.quit:
			return
		case <-authChanged:
			authChanged = ms.reg.recheck(ms)
		case <-stall.C:
			if ms.checkFlow() {
				stall.Reset(stallAfter)
			}
			ms.reg.evictStalled()
		case <-ms.readyCh:
			// The store notifies the watchers of a commit one after
			// another: yield once, so that it can finish notifying the
			// rest before the ready list is taken, and they are taken
			// in one pass.
			runtime.Gosched()
			ms.readyMu.Lock()
			batch, ms.ready = ms.ready, batch[:0]
			for _, w := range batch {
				w.queued = false
			}
			ms.readyMu.Unlock()
			if ms.collect(batch) {
				stall.Reset(stallAfter)
			}
			clear(batch)
			ms.reg.evictStalled()
		}
	}
}

// collect takes what the watchers of batch have queued, or defers or
// parks them when pending is full; it reports whether any waits for room.
func (ms *Stream) collect(batch []*streamWatcher) bool {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.gone {
		return false
	}
	for _, w := range batch {
		switch {
		case w.bw == nil || w.deferred:
			// Parked, ended, a notice from a watch closed since, or
			// waiting already.
		case ms.pendingBytes() < ms.reg.cfg.BufferBytes && ms.registryRoom():
			ms.take(w)
			ms.account()
		case ms.stalled():
			ms.park(w)
		default:
			w.deferred = true
			ms.flow.deferred = append(ms.flow.deferred, w)
		}
	}
	ms.signalConn()
	return ms.flow.waiting()
}

// registryRoom reports whether the registry's bound for all streams
// (TotalBufferBytes) lets the stream try to take more: the streams'
// buffers are within it. Whether a take fits is decided by what it holds
// (planTake); one that does not is parked. None is taken past the bound,
// whatever the stream holds: a crowd of streams each holding nothing
// would otherwise each take one more. When there is no room, streams
// whose readers have stalled are to let go of what they hold
// (evictStalled, which the collector runs next). The caller holds mu.
func (ms *Stream) registryRoom() bool {
	if ms.reg.buffered.Load() < ms.reg.cfg.TotalBufferBytes {
		return true
	}
	ms.reg.crowded.Store(true)
	return false
}

// account brings what the registry counts for the stream's buffers up to
// date: pending, the one being written and the one kept, at their
// capacity, and the scratch space of its messages (shared fields are
// counted apart, once); nothing once the stream is gone without a
// connection to write them. The caller holds mu.
func (ms *Stream) account() {
	var n int64
	if !ms.gone || ms.conn != nil {
		n = ms.flow.writingCap + int64(cap(ms.scratch))
		if ms.pending != nil {
			n += int64(cap(ms.pending.out))
		}
		if ms.flow.spare != nil {
			n += int64(cap(ms.flow.spare.out))
		}
	}
	if d := n - ms.charged; d != 0 {
		ms.charged = n
		ms.reg.buffered.Add(d)
	}
}

// stalled reports whether the stream's reader is away, or has made no
// progress for stallAfter: it has been writing what it took, or has not
// taken what is pending, that long. The caller holds mu.
func (ms *Stream) stalled() bool {
	return ms.conn == nil ||
		ms.flow.writing && time.Since(ms.flow.tookAt) >= stallAfter ||
		ms.pending != nil && time.Since(ms.flow.since) >= stallAfter
}

// checkFlow runs every stallAfter while watchers wait: it parks the
// deferred ones if the reader has stalled, and watches parked ones again
// if the reader has taken everything (a window of them came back with
// nothing to send, so that no take would call for more). It reports
// whether some still wait, to check again later.
func (ms *Stream) checkFlow() bool {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.gone {
		return false
	}
	if len(ms.flow.deferred) > 0 && ms.stalled() {
		ms.parkDeferred()
	}
	if ms.registryRoom() {
		if len(ms.flow.deferred) > 0 && ms.pending == nil && !ms.flow.writing {
			// Deferred for want of room among all streams, which others
			// have made since: ready again.
			ms.reflow()
		}
		if len(ms.flow.parked) > 0 && ms.conn != nil && ms.pending == nil && !ms.flow.writing {
			ms.unpark()
		}
	}
	return ms.flow.waiting()
}

// waiting reports whether watchers wait for room.
func (f *streamFlow) waiting() bool { return len(f.deferred) > 0 || len(f.parked) > 0 }

// parkDeferred parks every deferred watcher. The caller holds mu.
func (ms *Stream) parkDeferred() {
	for i, w := range ms.flow.deferred {
		ms.flow.deferred[i] = nil
		if w.deferred {
			w.deferred = false
			if w.bw != nil {
				ms.park(w)
			}
		}
	}
	ms.flow.deferred = ms.flow.deferred[:0]
}

// park closes w's backend watch, dropping what it queued; unpark watches
// it again from w.next.
func (ms *Stream) park(w *streamWatcher) {
	w.bw.Close()
	w.bw = nil
	w.parked = true
	ms.flow.parked = append(ms.flow.parked, w)
	ms.flow.parkedNow = true
	ms.reg.parks.Add(1)
}

// madeRoom: the connection took pending (took bytes of it) to write it.
// The caller holds mu.
func (ms *Stream) madeRoom(took int) {
	ms.flow.writing = took > 0
	ms.flow.hint = max(took, ms.flow.hint/2)
	if ms.flow.hint <= stream.MaxPooledBuffer {
		ms.flow.spare = nil // not busy: keep nothing
	}
	ms.account()
	ms.reflow()
}

// wrote: the connection c has written what it took.
func (ms *Stream) wrote(c *streamConn) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.conn == c && !ms.gone {
		ms.flow.writing = false
		ms.reflow()
	}
}

// reflow: the reader made progress. Deferred watchers are ready again,
// and parked ones watched again, while pending has room. The caller
// holds mu.
func (ms *Stream) reflow() {
	ms.flow.tookAt = time.Now()
	if len(ms.flow.deferred) > 0 {
		ms.readyMu.Lock()
		for i, w := range ms.flow.deferred {
			ms.flow.deferred[i] = nil
			w.deferred = false
			if !w.queued {
				w.queued = true
				ms.ready = append(ms.ready, w)
			}
		}
		ms.readyMu.Unlock()
		ms.flow.deferred = ms.flow.deferred[:0]
		ms.kick()
	}
	if len(ms.flow.parked) > 0 && ms.pendingBytes() < ms.reg.cfg.BufferBytes && ms.registryRoom() {
		ms.unpark()
	}
}

// kick wakes the collector.
func (ms *Stream) kick() {
	select {
	case ms.readyCh <- struct{}{}:
	default:
	}
}

// unpark watches parked watchers again, oldest first, as many as the
// window allows: it doubles while nothing had to be parked since the last
// take, and halves when something had. A watch that cannot start (the
// backend is closing) ends the stream.
func (ms *Stream) unpark() {
	f := &ms.flow
	n := max(minUnpark, f.unparkN*2)
	if f.parkedNow {
		n = max(minUnpark, f.unparkN/2)
	}
	f.unparkN, f.parkedNow = n, false
	i := 0
	for ; i < len(f.parked) && n > 0; i++ {
		w := f.parked[i]
		f.parked[i] = nil
		if !w.parked || w.final != nil {
			continue // ended, or rewound and watched again
		}
		w.parked = false
		n--
		if err := ms.watch(w, w.next); err != nil {
			ms.end(cancelReason(err), false)
			return
		}
	}
	rest := copy(f.parked, f.parked[i:])
	clear(f.parked[rest:])
	f.parked = f.parked[:rest]
}

// signalConn tells the connection there is something to write.
func (ms *Stream) signalConn() {
	if ms.conn != nil && (ms.pending != nil || ms.gone) {
		ms.conn.signal()
	}
}
