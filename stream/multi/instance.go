package multi

import (
	"context"
	"encoding/base64"
	"time"
)

// An instance of a shared stream on the gateway serving it: made from
// its record, it follows the record and keeps its lease (see
// record.go).

// sharedStream is what an instance of a shared stream adds to it.
// Guarded by the stream's mu but for the fields set at its making.
type sharedStream struct {
	store  Store
	inst   [8]byte // names this instance in its cursors
	ctx    context.Context
	cancel context.CancelFunc
	touch  chan struct{} // asks keepRecord to renew the lease now
	expire chan uint64   // asks keepRecord to drop the stream: idle since the arm of this generation

	startVersion int64  // the record's version it was made from
	version      int64  // the last version applied
	known        int64  // every watch ID up to it is known: absent ones are gone
	reader       string // the record's Reader
	order        []*streamWatcher
	suffix, raw  []byte // the last cursor, reused
}

// isGone reports whether the stream is gone.
func (ms *Stream) isGone() bool {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	return ms.gone
}

// kickConn ends the stream's connection, if any, as detach would: the
// stream is read elsewhere. The caller holds mu.
func (ms *Stream) kickConn() {
	c := ms.conn
	if c == nil {
		return
	}
	ms.conn = nil
	close(c.kicked)
	ms.parkDeferred()
	ms.armIdle()
	ms.account()
}

// name is how the record names the instance reading the stream.
func (sh *sharedStream) name() string { return base64.RawURLEncoding.EncodeToString(sh.inst[:]) }

// load starts the watchers of record d at version, each where cursor c
// says (nil: from its start). The caller holds mu.
func (ms *Stream) load(d *streamDef, version int64, c *Cursor) {
	sh := ms.shared
	sh.version, sh.reader = version, d.Reader
	sh.known = d.Next - 1
	for i := range d.Watches {
		wd := &d.Watches[i]
		state := uint64(posUncreated)
		if c != nil {
			state = c.state(wd.ID)
		}
		if state == posGone {
			continue
		}
		ms.startDef(wd, state)
	}
	ms.signalConn()
}

// applyDef brings the instance up to record d at version: watchers added
// since start, those deleted end. The caller holds mu.
func (ms *Stream) applyDef(d *streamDef, version int64) {
	sh := ms.shared
	if ms.gone || version <= sh.version {
		return
	}
	sh.version, sh.reader = version, d.Reader
	if d.Reader != "" && d.Reader != sh.name() {
		ms.kickConn() // another gateway's connection took the stream over
	}
	known := sh.known
	sh.known = max(known, d.Next-1) // before the created messages: their cursors name them
	for i := range d.Watches {
		wd := &d.Watches[i]
		switch w := ms.watchers[wd.ID]; {
		case wd.ID > known && !wd.Deleted:
			// Ended watchers are kept until their final message is
			// confirmed, as many as there may be live ones (addWatch).
			ms.foldEnded(ms.reg.cfg.MaxWatchers)
			ms.startDef(wd, posUncreated)
		case wd.Deleted && w != nil && w.final == nil:
			ms.finish(w, "canceled", canceledPayload(ms.scratch[:0], w.id, "watch deleted"))
		}
	}
	ms.signalConn()
}

// startDef starts the watcher of wd at state (posUncreated, or its next
// revision plus posNextBase); a deleted one sends only what the client
// has not had of it: its created message, then its final one. The
// caller holds mu.
func (ms *Stream) startDef(wd *watchDef, state uint64) {
	w := &streamWatcher{id: wd.ID, req: wd.request(), start: wd.Start, createdRev: wd.Created}
	w.req.Notify = func() { ms.notify(w) }
	created := state != posUncreated
	w.next = wd.Start
	if created {
		w.next = int64(state - posNextBase)
	}
	w.base = watcherBase{next: w.next, created: created}
	w.sent = w.base
	ms.watchers[w.id] = w
	ms.shared.order = append(ms.shared.order, w)
	ms.live++
	if !created {
		ms.emitCreated(w)
	}
	switch {
	case wd.Deleted:
		ms.finishUnwatched(w, "watch deleted")
	case ms.reg.acquire(ms.limitKey, 1) != nil:
		ms.finishUnwatched(w, ms.reg.reason(ErrGatewayWatchers))
	case !ms.reg.allowed(ms, w.keys()):
		ms.reg.release(ms.limitKey, 1)
		ms.finishUnwatched(w, "permission denied")
	default:
		if err := ms.watch(w, w.next); err != nil {
			ms.reg.release(ms.limitKey, 1)
			ms.finishUnwatched(w, cancelReason(err))
		}
	}
}

// finishUnwatched ends a watcher that has no backend watch and holds no
// count against --max-watchers with a canceled message, as finish does.
// The caller holds mu.
func (ms *Stream) finishUnwatched(w *streamWatcher, reason string) {
	w.final = &streamFinal{event: "canceled", payload: canceledPayload(nil, w.id, reason)}
	ms.live--
	ms.ended++
	ms.emitFinal(w)
}

// followRecord applies each change of the stream's record, made through
// any gateway, until the stream is gone here; the record deleted (through
// another gateway, or by its lease's expiry) ends it.
func (ms *Stream) followRecord() {
	defer ms.reg.wg.Done()
	sh := ms.shared
	_ = sh.store.FollowStreamRecord(sh.ctx, ms.id, sh.startVersion, func(data []byte, version int64) bool {
		ms.mu.Lock()
		defer ms.mu.Unlock()
		if ms.gone {
			return false
		}
		if data == nil {
			ms.end("stream deleted", false)
			return false
		}
		if d, err := decodeStreamDef(data); err == nil {
			ms.applyDef(d, version)
		}
		return true
	})
}

// keepRecord renews the lease of the stream's record while a connection
// of this gateway reads it, and once more when one ends, so that the
// record goes IdleTimeout after the last connection, until the stream is
// gone here.
func (ms *Stream) keepRecord() {
	defer ms.reg.wg.Done()
	sh := ms.shared
	t := time.NewTicker(max(ms.reg.cfg.IdleTimeout/6, 50*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-sh.ctx.Done():
			return
		case <-sh.touch:
		case gen := <-sh.expire:
			ms.dropIdle(gen)
			continue
		case <-t.C:
			ms.mu.Lock()
			reading := ms.conn != nil
			ms.mu.Unlock()
			if !reading {
				continue
			}
		}
		alive, err := sh.store.TouchStreamRecord(sh.ctx, ms.id)
		if err == nil && !alive {
			ms.mu.Lock()
			ms.end("stream deleted", false)
			ms.mu.Unlock()
			return
		}
	}
}

// dropIdle drops the stream, idle since the arm of generation gen: its
// record too if this instance was the last to read it and nothing changed
// it since (else the record's lease, or the instance now reading it,
// decides).
func (ms *Stream) dropIdle(gen uint64) {
	sh := ms.shared
	ms.mu.Lock()
	idle := !ms.gone && ms.conn == nil && ms.idleGen == gen
	mine, version := sh.reader == sh.name(), sh.version
	ms.mu.Unlock()
	if !idle {
		return
	}
	if mine {
		_, _ = sh.store.DeleteStreamRecord(sh.ctx, ms.id, version)
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if !ms.gone && ms.conn == nil && ms.idleGen == gen {
		ms.markGone()
		ms.reg.forget(ms)
	}
}

// touchRecord asks keepRecord to renew the record's lease now. The caller
// holds mu.
func (ms *Stream) touchRecord() {
	if ms.shared == nil {
		return
	}
	select {
	case ms.shared.touch <- struct{}{}:
	default:
	}
}
