package httpapi

import (
	"context"
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
