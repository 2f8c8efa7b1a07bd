package stream

import (
	"time"

	"github.com/rs/zerolog"

	"github.com/httpkv/httpkv/kv"
)

// Watch is one open watch as the loop drives it: its watcher and its
// framing.
type Watch struct {
	Stream kv.WatchStream
	Enc    Encoder
	Rev    int64 // the store's revision when the watch began
	// Reason is the canceled message's reason for why the loop ended
	// the stream.
	Reason func(why error) string
	// Log is told, with RequestID, when the stream ends.
	RequestID string
	Log       zerolog.Logger
	start     time.Time
}

// Open writes the retry delay and the created message.
func (ws *Watch) Open(s Sink) bool {
	ws.start = time.Now()
	sb := GetBuffer()
	sb.Out = ws.Enc.Retry(sb.Out, 1000)
	sb.Out = ws.Enc.Created(sb.Out, ws.Rev, ws.Stream.StartRevision())
	ok := s.Send(sb.Out)
	PutBuffer(sb)
	return ok
}

// Ready is the watcher's: signalled when it has something.
func (ws *Watch) Ready() <-chan struct{} { return ws.Stream.Ready() }

// Done is nil: nothing else ends a watch.
func (ws *Watch) Done() <-chan struct{} { return nil }

// Take takes everything ready, then writes it at once: a burst goes out
// in few writes, a lone event at once. The store wakes a reader once a
// commit's revisions are all queued, so one write carries the whole
// commit. (Yielding first, to let later commits join, saved nothing more
// once it did, and cost every lone event a second pass through the
// scheduler: docs/performance.md.) One take per write: what it holds
// counts against the watcher's byte bound until the write is done and
// released, so a client that stops reading holds at most that bound
// here. The buffers are taken only to write: an idle stream holds none.
func (ws *Watch) Take(s Sink) (wrote, end bool) {
	sb := GetBuffer()
	defer PutBuffer(sb)
	ok, ended, wrote := WriteResponses(s, ws.Enc, sb, ws.Stream.Next())
	if !ok || ended {
		return wrote, true
	}
	if len(sb.Out) > 0 {
		ok = s.Send(sb.Out)
		wrote = true
	}
	ws.Stream.Release()
	return wrote, !ok
}

// KeepAlive writes a keep-alive.
func (ws *Watch) KeepAlive(s Sink) bool {
	sb := GetBuffer()
	defer PutBuffer(sb)
	sb.Out = ws.Enc.KeepAlive(sb.Out)
	return s.Send(sb.Out)
}

// End writes a canceled message: the stream ends after it.
func (ws *Watch) End(s Sink, why error) {
	sb := GetBuffer()
	sb.Out, sb.Scratch, _ = ws.Enc.Response(sb.Out, sb.Scratch, &kv.WatchResponse{Canceled: true, CancelReason: ws.Reason(why)})
	s.Send(sb.Out)
	PutBuffer(sb)
}

// Close closes the watcher, and logs the end of the stream.
func (ws *Watch) Close() {
	ws.Stream.Close()
	ws.Log.Debug().Str("request_id", ws.RequestID).Dur("duration", time.Since(ws.start)).Msg("watch stream ended")
}
