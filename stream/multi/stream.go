package multi

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
)

// Stream is one stream of /v1/watch/streams: many watchers, read
// through one connection at a time, resumable as a whole.
//
// Its watchers are the backend's watches, started with a Notify function
// rather than a Ready channel each, so that a watcher costs no goroutine
// and no channel: Notify puts it on the ready list, and the stream's
// collector goroutine takes what it has, encodes it into pending and
// records each message in the log (log.go) under a sequence
// number, the message's SSE id. The connection reading the stream
// (conn.go) writes all of pending at once, one write and one
// flush for every revision ready across the watchers.
//
// Memory is bounded per stream (flow.go): pending holds at
// most BufferBytes (plus the one take that crossed it); past it, ready
// watchers wait in the backend, whose own bound per watch applies, while
// the reader is taking what is pending, and are parked when it is away or
// stalled, so that a reader that stops reading falls back to history as a
// single watch's reader does, whatever the number of watchers. All
// streams together hold at most TotalBufferBytes, each take counted as
// encoded before it is, the large events they carry shared
// (shared.go).
type Stream struct {
	id       string
	reg      *Registry
	owner    Owner
	limitKey string // what the stream counts against (see Registry)

	// readyMu guards ready and each watcher's queued flag. Lock order:
	// mu, then the backend's own locks (a watch started or closed under
	// mu), then readyMu. Notify takes readyMu only, and the backend
	// calls it holding none of its locks (kv.WatchRequest.Notify).
	readyMu sync.Mutex
	ready   []*streamWatcher
	readyCh chan struct{} // signalled when ready gains a watcher
	quit    chan struct{} // closed when the stream is gone: the collector returns

	mu       sync.Mutex // guards the fields below
	watchers map[int64]*streamWatcher
	live     int           // watchers not ended
	ended    int           // ended watchers kept until their final message is confirmed
	nextID   int64         // the next watch_id
	flow     streamFlow    // what waits for room in pending
	pending  *streamBuffer // encoded and not yet taken by a connection; nil when empty
	charged  int64         // what the registry counts for the stream's buffers (see account)
	log      deliveryLog
	conn     *streamConn // the connection reading the stream, or nil
	idle     *time.Timer // drops the stream once it had no connection for IdleTimeout
	idleGen  uint64      // counts the arms of idle, so that a stale one does nothing
	gone     bool        // deleted, expired, ended or closed: no more requests
	scratch  []byte      // one message's payload while it is encoded
	plan     takePlan    // what the collector's take holds (see planTake)
	rewound  []*streamWatcher
	stopOnce sync.Once
	// shared is set when the stream is the deployment's, its record in
	// the backend (store.go); nil for a gateway's own.
	shared *sharedStream
}

// Owner is who a stream of many watchers belongs to: a user, by name and
// ID (a user created again under the name of a deleted one has another
// ID, and none of her streams), or no one while auth is off. A stream
// outlives the token it was made with: any valid token of its owner reads
// it, and it ends only when the owner no longer can (deleted, or auth
// turned on or off).
type Owner struct {
	User   string
	ID     string
	AuthOn bool
}

// streamWatcher is one watcher of a Stream. All fields but queued are
// guarded by the stream's mu.
type streamWatcher struct {
	id  int64
	req kv.WatchRequest // as asked, with Notify set; StartRevision is set per watch
	// start is the first revision it reports, createdRev the header
	// revision of its created message; both fixed when it starts.
	start, createdRev int64
	bw                kv.WatchStream // the backend's watch; nil while parked, and once ended
	next              int64          // the first revision not yet taken from the backend
	parked            bool
	deferred          bool         // ready, waiting for room in pending
	rewound           bool         // scratch for resume
	final             *streamFinal // how it ended, once it has
	base              watcherBase  // its state at the log's fold point
	sent              watcherBase  // its state after its last message (shared streams: their cursors)
	queued            bool         // on the ready list; guarded by readyMu
}

// keys is what w reads, for permission checks.
func (w *streamWatcher) keys() keyrange.Range {
	return keyrange.Range{Key: w.req.Key, End: w.req.End}
}

// streamFinal is the last message of a watcher: compacted or canceled.
type streamFinal struct {
	event   string
	payload []byte
}

// newMultiStream returns a stream with no watchers; its collector starts
// with run.
func newMultiStream(reg *Registry, id string, owner Owner, limitKey string) *Stream {
	return &Stream{
		id: id, reg: reg, owner: owner, limitKey: limitKey,
		readyCh:  make(chan struct{}, 1),
		quit:     make(chan struct{}),
		watchers: make(map[int64]*streamWatcher),
		nextID:   1,
	}
}

// notify puts w on the ready list: it is w's backend watch's Notify.
func (ms *Stream) notify(w *streamWatcher) {
	ms.readyMu.Lock()
	if !w.queued {
		w.queued = true
		ms.ready = append(ms.ready, w)
	}
	ms.readyMu.Unlock()
	ms.kick()
}

// watch starts w's backend watch from revision from (0: from now).
func (ms *Stream) watch(w *streamWatcher, from int64) error {
	req := w.req
	req.StartRevision = from
	bw, err := ms.reg.backend.Watch(context.Background(), req)
	if err != nil {
		return err
	}
	w.bw = bw
	return nil
}

// cancelReason is the canceled reason for a backend that refuses to
// watch again: it is closing, or failed.
func cancelReason(err error) string {
	if errors.Is(err, kv.ErrClosed) {
		return "shutting down"
	}
	return "the backend failed"
}

// AddWatch starts a watcher and queues its created message.
func (ms *Stream) AddWatch(req kv.WatchRequest) (int64, error) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.gone {
		return 0, ErrStreamNotFound
	}
	if ms.live >= ms.reg.cfg.MaxWatchers {
		return 0, TooManyWatchers(ms.reg.cfg.MaxWatchers)
	}
	// Ended watchers are kept until their final message is confirmed;
	// past as many as there may be live ones, the oldest are let go.
	ms.foldEnded(ms.reg.cfg.MaxWatchers)
	if ms.ended >= ms.reg.cfg.MaxWatchers {
		return 0, TooManyWatchers(ms.reg.cfg.MaxWatchers)
	}
	// Each live watcher counts against the bound for all watchers of the
	// server, and its owner's share of it, until it ends (finish) or the
	// stream goes (markGone).
	if aerr := ms.reg.acquire(ms.limitKey, 1); aerr != nil {
		return 0, aerr
	}
	w := &streamWatcher{id: ms.nextID, req: req}
	w.req.Notify = func() { ms.notify(w) }
	if err := ms.watch(w, req.StartRevision); err != nil {
		ms.reg.release(ms.limitKey, 1)
		return 0, err
	}
	ms.nextID++
	w.start, w.createdRev = w.bw.StartRevision(), w.bw.Revision()
	w.next = w.start
	w.base.next = w.start
	ms.watchers[w.id] = w
	ms.live++
	ms.emitCreated(w)
	// A change of permissions between the request's check and now would
	// have been rechecked without this watcher: check it again.
	if !ms.reg.allowed(ms, w.keys()) {
		ms.finish(w, "canceled", canceledPayload(ms.scratch[:0], w.id, "permission denied"))
	}
	ms.signalConn()
	return w.id, nil
}

// Delete ends the stream, every watcher canceled for reason; false if
// it was gone already.
func (ms *Stream) Delete(reason string) bool {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.gone {
		return false
	}
	ms.end(reason, false)
	return true
}

// CancelWatch ends a watcher with a canceled message.
func (ms *Stream) CancelWatch(id int64, reason string) error {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	w := ms.watchers[id]
	if ms.gone {
		return ErrStreamNotFound
	}
	if w == nil || w.final != nil {
		return ErrWatchNotFound
	}
	ms.finish(w, "canceled", canceledPayload(ms.scratch[:0], w.id, reason))
	ms.signalConn()
	return nil
}

// finish ends w with its final message: compacted or canceled.
func (ms *Stream) finish(w *streamWatcher, event string, payload []byte) {
	if w.bw != nil {
		w.bw.Close()
		w.bw = nil
	}
	w.parked = false
	w.final = &streamFinal{event: event, payload: append([]byte(nil), payload...)}
	ms.live--
	ms.reg.release(ms.limitKey, 1)
	ms.ended++
	ms.emitFinal(w)
}

// end ends every watcher with a canceled message for reason (all of them,
// those ended already included, with all), and the stream with them: the
// connection writes what is pending and closes. The caller holds mu.
func (ms *Stream) end(reason string, all bool) {
	if ms.gone {
		return
	}
	for _, w := range ms.watchers {
		switch {
		case w.final == nil:
			ms.finish(w, "canceled", canceledPayload(ms.scratch[:0], w.id, reason))
		case all:
			ms.emit(w, entryFinal, "canceled", w.base.next, canceledPayload(ms.scratch[:0], w.id, reason))
		}
	}
	ms.markGone()
	ms.signalConn()
	ms.reg.forget(ms)
}

// markGone stops the stream: no more requests, no more collecting. The
// caller holds mu.
func (ms *Stream) markGone() {
	if ms.gone {
		return
	}
	ms.gone = true
	ms.reg.release(ms.limitKey, ms.live)
	ms.live = 0
	for _, w := range ms.watchers {
		if w.bw != nil {
			w.bw.Close()
			w.bw = nil
		}
	}
	if ms.idle != nil {
		ms.idle.Stop()
	}
	ms.stopOnce.Do(func() { close(ms.quit) })
	if ms.shared != nil {
		ms.shared.cancel() // its record's goroutines
	}
	if ms.conn == nil {
		ms.dropPending() // nobody will write it
	}
	ms.scratch = nil // it encodes no more messages
	ms.account()
}

// dropPending lets go of what is pending, unwritten. The caller holds mu.
func (ms *Stream) dropPending() {
	if ms.pending != nil {
		ms.reg.dropBuffer(ms.pending)
		ms.pending = nil
	}
}

// rechecks the watchers' permissions with allowed; those refused end with
// a canceled message.
func (ms *Stream) recheck(ownerErr error, allowed func(keyrange.Range) bool) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.gone {
		return
	}
	if ownerErr != nil {
		ms.end(ms.reg.reason(ownerErr), false)
		return
	}
	for _, w := range ms.watchers {
		if w.final == nil && !allowed(w.keys()) {
			ms.finish(w, "canceled", canceledPayload(ms.scratch[:0], w.id, "permission denied"))
		}
	}
	ms.signalConn()
}

// ID is the stream's id, which names it in the API.
func (ms *Stream) ID() string { return ms.id }

// Owner is who the stream belongs to.
func (ms *Stream) Owner() Owner { return ms.owner }

// Stats is what a stream holds, as Stream.Stats reads it.
type Stats struct {
	// Watchers counts the live watchers; Messages, those the stream
	// has issued.
	Watchers int
	Messages int64
	// Deferred counts the watchers ready and waiting for room.
	Deferred int
	// Holding reports whether the stream holds bytes pending or being
	// written.
	Holding bool
}

// Stats reads what the stream holds now.
func (ms *Stream) Stats() Stats {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	return Stats{Watchers: ms.live, Messages: ms.log.issued, Deferred: len(ms.flow.deferred),
		Holding: ms.pending != nil || ms.flow.writingCap > 0}
}
