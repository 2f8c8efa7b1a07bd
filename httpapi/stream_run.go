package httpapi

import (
	"net/http"

	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/sink"
)

// runStream serves a long-lived stream whose headers are set: pump (the
// stream loop, given its source) writes
// it to a sink until it ends (sink.Set.Serve). Once the handler is
// closing, or if the connection is lost while taken over, abandon is
// called instead of pump. Either way release is called once the stream
// has ended: it gives back what admitStream counted for it.
func (h *Handler) runStream(w http.ResponseWriter, r *http.Request, pump func(streamSink), abandon, release func()) {
	run := func(s sink.Sink) {
		defer release()
		pump(s)
	}
	giveUp := func() {
		abandon()
		release()
	}
	if !h.streams.Serve(w, r, h.cfg.WriteTimeout, run, giveUp) {
		h.writeError(w, r, kv.ErrClosed)
	}
}
