package httpapi

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/httpkv/httpkv/watch"
)

// watch serves GET /v1/watch: one watcher per stream, framed as SSE (or
// NDJSON on request) until the client leaves, the watch ends (compacted,
// canceled) or the server shuts down.
func (h *Handler) watch(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	sel := q.selector(false)
	req := watch.Request{
		Key:            sel.Key,
		End:            sel.End,
		StartRevision:  q.int64("start_revision", 0),
		PrevKV:         q.boolean("prev_kv"),
		ProgressNotify: q.boolean("progress_notify"),
	}
	if f := q.v.Get("filters"); f != "" {
		for _, name := range strings.Split(f, ",") {
			switch strings.TrimSpace(name) {
			case "noput":
				req.NoPut = true
			case "nodelete":
				req.NoDelete = true
			default:
				q.fail("filters is a comma list of noput and nodelete, not %q", f)
			}
		}
	}
	if id := strings.TrimSpace(r.Header.Get("Last-Event-ID")); id != "" {
		// Resume after the last message the client saw.
		n, err := strconv.ParseInt(id, 10, 64)
		if err != nil || n < 0 || n == 1<<63-1 {
			q.fail("Last-Event-ID must be a revision, not %q", id)
		}
		req.StartRevision = n + 1
	}
	if q.err != nil {
		writeAPIError(w, q.err)
		return
	}
	// Take the change signal before checking, so no change slips between.
	var authChanged <-chan struct{}
	notifier, _ := h.cfg.Authorizer.(interface{ Changed() <-chan struct{} })
	if notifier != nil {
		authChanged = notifier.Changed()
	}
	access := Access{Read: []KeyRange{sel}}
	if !h.authorize(w, r, access) {
		return
	}
	enc := streamEncoder{ndjson: strings.Contains(r.Header.Get("Accept"), "application/x-ndjson")}
	rev := h.cfg.Store.KV().Rev()
	stream, err := h.cfg.Store.Watch(req)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	defer stream.Close()

	hd := w.Header()
	hd.Set("Content-Type", enc.contentType())
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Accel-Buffering", "no")
	setRevision(w, rev)
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)

	buf := enc.retry(make([]byte, 0, 4096), 1000)
	buf = enc.created(buf, rev, stream.StartRevision())
	if !send(w, rc, buf) {
		return
	}
	keepAlive := time.NewTicker(h.cfg.KeepAliveInterval)
	defer keepAlive.Stop()
	var scratch []byte
	for {
		buf = buf[:0]
		select {
		case <-r.Context().Done():
			return
		case <-keepAlive.C:
			buf = enc.keepAlive(buf)
		case <-authChanged:
			// Users or roles changed: end the stream if it is no longer
			// allowed.
			authChanged = notifier.Changed()
			if h.cfg.Authorizer.Authorize(r, access) != nil {
				buf, _, _ = enc.response(buf, scratch, &watch.Response{Canceled: true, CancelReason: "permission denied"})
				send(w, rc, buf)
				return
			}
			continue
		case <-stream.Ready():
			// Take everything ready, then write it at once: a burst goes
			// out in few writes, a lone event at once.
			for {
				rs := stream.Next()
				if len(rs) == 0 {
					break
				}
				for i := range rs {
					var final bool
					buf, scratch, final = enc.response(buf, scratch, &rs[i])
					if final {
						send(w, rc, buf)
						return
					}
				}
			}
			if len(buf) == 0 {
				continue
			}
			keepAlive.Reset(h.cfg.KeepAliveInterval)
		}
		if !send(w, rc, buf) {
			return
		}
	}
}

// send writes and flushes; false means the client is gone.
func send(w http.ResponseWriter, rc *http.ResponseController, b []byte) bool {
	if _, err := w.Write(b); err != nil {
		return false
	}
	return rc.Flush() == nil
}
