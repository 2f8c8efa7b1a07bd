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
	enc       stream.Encoder
	rev       int64 // the store's revision when the watch began
	requestID string
	log       zerolog.Logger
	start     time.Time
}

// Open writes the retry delay and the created message.
func (ws *watchStream) Open(s streamSink) bool {
	ws.start = time.Now()
	sb := stream.GetBuffer()
	sb.Out = ws.enc.Retry(sb.Out, 1000)
	sb.Out = ws.enc.Created(sb.Out, ws.rev, ws.stream.StartRevision())
	ok := s.Send(sb.Out)
	stream.PutBuffer(sb)
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
	sb := stream.GetBuffer()
	defer stream.PutBuffer(sb)
	ok, ended, wrote := stream.WriteResponses(s, ws.enc, sb, ws.stream.Next())
	if !ok || ended {
		return wrote, true
	}
	if len(sb.Out) > 0 {
		ok = s.Send(sb.Out)
		wrote = true
	}
	ws.stream.Release()
	return wrote, !ok
}

func (ws *watchStream) KeepAlive(s streamSink) bool {
	sb := stream.GetBuffer()
	defer stream.PutBuffer(sb)
	sb.Out = ws.enc.KeepAlive(sb.Out)
	return s.Send(sb.Out)
}

// End writes a canceled message: the stream ends after it.
func (ws *watchStream) End(s streamSink, why error) {
	sb := stream.GetBuffer()
	sb.Out, sb.Scratch, _ = ws.enc.Response(sb.Out, sb.Scratch, &kv.WatchResponse{Canceled: true, CancelReason: streamEndReason(why)})
	s.Send(sb.Out)
	stream.PutBuffer(sb)
}

func (ws *watchStream) Close() {
	ws.stream.Close()
	ws.log.Debug().Str("request_id", ws.requestID).Dur("duration", time.Since(ws.start)).Msg("watch stream ended")
}

// Close ends every open watch stream with a canceled message ("shutting
// down") and waits for them all, those that took their connection over
// included, then drops the streams of many watchers. New watches answer
// 503 from then on. It is safe to call more than once, and after
// Shutdown.
func (h *Handler) Close() {
	h.streams.BeginClose()
	_ = h.streams.Wait(context.Background())
	h.wstreams.Close()
}

// Shutdown is Close with a grace period: it waits for the streams until
// ctx is done, then closes the HTTP/1 connections streams took over, so
// that they end whatever their clients do, and returns ctx's error. A
// stream over HTTP/2 still sending then is cut by closing the server
// (http.Server.Close), after which Close returns promptly.
func (h *Handler) Shutdown(ctx context.Context) error {
	h.streams.BeginClose()
	err := h.streams.Wait(ctx)
	h.wstreams.Close()
	return err
}
