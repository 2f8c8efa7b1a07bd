package httpapi

import (
	"context"
	"time"

	"github.com/rs/zerolog"

	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/stream"
)

// streamSink is where a stream writes: package sink's connections.
type streamSink = stream.Sink

// loop is the one loop every stream of the handler runs in.
func (h *Handler) loop() stream.Loop {
	return stream.Loop{KeepAlive: h.cfg.KeepAliveInterval, Stop: h.streams.Stop()}
}

// streamGuard is what checks again, while a stream is open, that caller
// may still have access: a (nil: auth off) was asked for changed before
// the request was authorized, so that no change slips between.
func streamGuard(a streamAuthorizer, changed <-chan struct{}, caller streamCaller, access Access) stream.Guard {
	if a == nil {
		return stream.Guard{}
	}
	return stream.Guard{Expires: caller.Expires, Changed: changed, Next: a.Changed,
		Recheck: func() error { return a.Recheck(caller, access) }}
}

// watchStream is one open watch as the stream loop drives it: its
// watcher and its framing.
type watchStream struct {
	stream    kv.WatchStream
	enc       streamEncoder
	rev       int64 // the store's revision when the watch began
	requestID string
	log       zerolog.Logger
	start     time.Time
}

// Open writes the retry delay and the created message.
func (ws *watchStream) Open(s streamSink) bool {
	ws.start = time.Now()
	sb := getStreamBuffer()
	sb.out = ws.enc.retry(sb.out, 1000)
	sb.out = ws.enc.created(sb.out, ws.rev, ws.stream.StartRevision())
	ok := s.Send(sb.out)
	putStreamBuffer(sb)
	return ok
}

func (ws *watchStream) Ready() <-chan struct{} { return ws.stream.Ready() }
func (ws *watchStream) Done() <-chan struct{}  { return nil }

// Take takes everything ready, then writes it at once: a burst goes out
// in few writes, a lone event at once. The store wakes a reader once a
// commit's revisions are all queued, so one write carries the whole
// commit. (Yielding first, to let later commits join, saved nothing more
// once it did, and cost every lone event a second pass through the
// scheduler: docs/performance.md.) One take per write: what it holds
// counts against the watcher's byte bound until the write is done and
// released, so a client that stops reading holds at most that bound
// here. The buffers are taken only to write: an idle stream holds none.
func (ws *watchStream) Take(s streamSink) (wrote, end bool) {
	sb := getStreamBuffer()
	defer putStreamBuffer(sb)
	ok, ended, wrote := writeResponses(s, ws.enc, sb, ws.stream.Next())
	if !ok || ended {
		return wrote, true
	}
	if len(sb.out) > 0 {
		ok = s.Send(sb.out)
		wrote = true
	}
	ws.stream.Release()
	return wrote, !ok
}

func (ws *watchStream) KeepAlive(s streamSink) bool {
	sb := getStreamBuffer()
	defer putStreamBuffer(sb)
	sb.out = ws.enc.keepAlive(sb.out)
	return s.Send(sb.out)
}

// End writes a canceled message: the stream ends after it.
func (ws *watchStream) End(s streamSink, why error) {
	sb := getStreamBuffer()
	sb.out, sb.scratch, _ = ws.enc.response(sb.out, sb.scratch, &kv.WatchResponse{Canceled: true, CancelReason: streamEndReason(why)})
	s.Send(sb.out)
	putStreamBuffer(sb)
}

func (ws *watchStream) Close() {
	ws.stream.Close()
	ws.log.Debug().Str("request_id", ws.requestID).Dur("duration", time.Since(ws.start)).Msg("watch stream ended")
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
