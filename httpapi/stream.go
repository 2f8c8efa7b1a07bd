package httpapi

import (
	"context"

	"time"

	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/sink"
)

// streamSink is where a stream writes (package sink).
type streamSink = sink.Sink

// watchStream is one open watch: its watcher, its framing, and what it
// needs to check again that its caller may still read it.
type watchStream struct {
	stream      kv.WatchStream
	enc         streamEncoder
	rev         int64 // the store's revision when the watch began
	auth        streamAuthorizer
	authChanged <-chan struct{}
	caller      streamCaller
	access      Access
	requestID   string
}

// pump writes a watch to its sink until the client leaves, the watch ends
// (compacted, canceled) or the handler closes. It closes the watcher and
// the sink before returning.
func (h *Handler) pump(ws *watchStream, sink streamSink) {
	defer sink.Close()
	defer ws.stream.Close()
	start := time.Now()
	defer func() {
		h.cfg.Logger.Debug().Str("request_id", ws.requestID).Dur("duration", time.Since(start)).Msg("watch stream ended")
	}()
	enc := ws.enc
	sb := getStreamBuffer()
	sb.out = enc.retry(sb.out, 1000)
	sb.out = enc.created(sb.out, ws.rev, ws.stream.StartRevision())
	ok := sink.Send(sb.out)
	putStreamBuffer(sb)
	if !ok {
		return
	}
	keepAlive := time.NewTicker(h.cfg.KeepAliveInterval)
	defer keepAlive.Stop()
	// resetKeepAlive puts the next keep-alive an interval after a write,
	// moving it at most once a second (a fraction of the interval, when
	// that is shorter): the timer's lock is taken per move, and a stream
	// of a busy prefix writes many times a second.
	lastReset := time.Now()
	resetKeepAlive := func() {
		if now := time.Now(); now.Sub(lastReset) >= min(time.Second, h.cfg.KeepAliveInterval/8) {
			keepAlive.Reset(h.cfg.KeepAliveInterval)
			lastReset = now
		}
	}
	// The stream ends when the token it was opened with expires.
	var expired <-chan time.Time
	if !ws.caller.Expires.IsZero() {
		t := time.NewTimer(time.Until(ws.caller.Expires))
		defer t.Stop()
		expired = t.C
	}
	// final writes a last message; the stream ends after it.
	final := func(r *kv.WatchResponse) {
		sb := getStreamBuffer()
		sb.out, sb.scratch, _ = enc.response(sb.out, sb.scratch, r)
		sink.Send(sb.out)
		putStreamBuffer(sb)
	}
	for {
		// The buffers are taken only to write: an idle stream holds none.
		var sb *streamBuffer
		select {
		case <-sink.Gone():
			return
		case <-h.streams.Stop():
			final(&kv.WatchResponse{Canceled: true, CancelReason: "shutting down"})
			return
		case <-keepAlive.C:
			sb = getStreamBuffer()
			sb.out = enc.keepAlive(sb.out)
		case <-expired:
			final(&kv.WatchResponse{Canceled: true, CancelReason: reasonTokenExpired})
			return
		case <-ws.authChanged:
			// Users, roles or the enabled flag changed: end the stream if
			// its token is no longer good or its caller may no longer
			// read it.
			ws.authChanged = ws.auth.Changed()
			if err := ws.auth.Recheck(ws.caller, ws.access); err != nil {
				final(&kv.WatchResponse{Canceled: true, CancelReason: streamEndReason(err)})
				return
			}
			continue
		case <-ws.stream.Ready():
			// Take everything ready, then write it at once: a burst goes
			// out in few writes, a lone event at once. The store wakes a
			// reader once a commit's revisions are all queued, so one
			// write carries the whole commit. (Yielding first, to let
			// later commits join, saved nothing more once it did, and
			// cost every lone event a second pass through the
			// scheduler: docs/performance.md.) One take per write: what
			// it holds counts against the watcher's byte bound until the
			// write is done and released, so a client that stops reading
			// holds at most that bound here.
			sb = getStreamBuffer()
			ok, ended, wrote := writeResponses(sink, enc, sb, ws.stream.Next())
			if !ok || ended {
				putStreamBuffer(sb)
				return
			}
			if wrote || len(sb.out) > 0 {
				resetKeepAlive()
			}
			if len(sb.out) == 0 {
				putStreamBuffer(sb)
				ws.stream.Release()
				continue
			}
		}
		ok := sink.Send(sb.out)
		putStreamBuffer(sb)
		ws.stream.Release()
		if !ok {
			return
		}
	}
}

// streamChunk is how much of a take a stream encodes before it writes: a
// watcher catching up takes a page of history at a time (up to the
// watcher's bound, a MiB or more of JSON), and encoding it whole grew
// the buffer by doubling, copying it over and over, and left megabytes
// for the collector to clear and the runtime to hand back to the
// system. Written in chunks, the buffer stays a pooled one and the
// client starts reading at once.
const streamChunk = 32 << 10

// writeResponses encodes rs into sb, sending every streamChunk bytes,
// and leaves what remains unsent in sb.out. ok is false when the client
// is gone; ended, when a final response was met: it is sent, with all
// before it, and the stream ends. wrote reports whether anything was
// sent.
func writeResponses(sink streamSink, enc streamEncoder, sb *streamBuffer, rs []kv.WatchResponse) (ok, ended, wrote bool) {
	flush := func() bool {
		if len(sb.out) < streamChunk {
			return true
		}
		wrote = true
		ok := sink.Send(sb.out)
		sb.out = sb.out[:0]
		return ok
	}
	for i := range rs {
		r := &rs[i]
		if r.CompactRevision != 0 || r.Canceled || r.Progress || len(r.Events) == 0 {
			sb.out, sb.scratch, ended = enc.response(sb.out, sb.scratch, r)
			if ended {
				return sink.Send(sb.out), true, true
			}
			if !flush() {
				return false, false, true
			}
			continue
		}
		// Events: a chunk may end after any revision's message, so that
		// a response of many stays within one chunk's buffer.
		for evs := r.Events; len(evs) > 0; {
			rev, n := revisionSpan(evs)
			switch {
			case revisionBytes(evs[:n]) > largeRevision:
				// Sent as it is encoded: see stream_large.go.
				c := chunkWriter{sink: sink, sb: sb, ok: true}
				ok := c.writeLargeEvents(enc, rev, evs[:n])
				wrote = wrote || c.sent
				if !ok {
					return false, false, true
				}
			case n == len(r.Events):
				sb.out = enc.sharedEvents(sb.out, rev, evs)
			default:
				sb.out = enc.events(sb.out, rev, evs[:n])
			}
			evs = evs[n:]
			if !flush() {
				return false, false, true
			}
		}
	}
	return true, false, wrote
}

// Close ends every open watch stream with a canceled message ("shutting
// down") and waits for them all, those that took their connection over
// included, then drops the streams of many watchers. New watches answer
// 503 from then on. It is safe to call more than once, and after
// Shutdown.
func (h *Handler) Close() {
	h.streams.BeginClose()
	_ = h.streams.Wait(context.Background())
	h.wstreams.close()
}

// Shutdown is Close with a grace period: it waits for the streams until
// ctx is done, then closes the HTTP/1 connections streams took over, so
// that they end whatever their clients do, and returns ctx's error. A
// stream over HTTP/2 still sending then is cut by closing the server
// (http.Server.Close), after which Close returns promptly.
func (h *Handler) Shutdown(ctx context.Context) error {
	h.streams.BeginClose()
	err := h.streams.Wait(ctx)
	h.wstreams.close()
	return err
}
