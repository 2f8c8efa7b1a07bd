package httpapi

import (
	"net/http"

	"github.com/httpkv/httpkv/kv"
)

// runStream serves a long-lived stream whose headers are set: pump writes
// it to a sink until it ends. Over HTTP/1.x the stream takes the
// connection over and pump runs on a goroutine of its own: an idle stream
// then costs that small goroutine instead of the server's connection
// goroutine, its grown stack and its buffers. Streams, and the
// connections they take over, are counted in h.streams for Close and
// Shutdown; once the handler is closing, or if the connection is lost
// while taken over, abandon is called instead of pump. Either way release
// is called once the stream has ended: it gives back what admitStream
// counted for it.
func (h *Handler) runStream(w http.ResponseWriter, r *http.Request, pump func(streamSink), abandon, release func()) {
	if !h.streams.start() {
		abandon()
		release()
		h.writeError(w, r, kv.ErrClosed)
		return
	}
	if r.ProtoMajor == 1 {
		sink, taken, err := hijack(w, h.takenHangups())
		switch {
		case err != nil:
			abandon() // the client is gone already
			release()
			h.streams.end()
			return
		case taken:
			h.streams.take(sink.conn)
			go func() {
				defer h.streams.end()
				defer release()
				defer h.streams.release(sink.conn)
				pump(sink)
			}()
			return
		}
	}
	defer h.streams.end()
	defer release()
	w.WriteHeader(http.StatusOK)
	pump(&responseSink{w: w, rc: http.NewResponseController(w), done: r.Context().Done()})
}
