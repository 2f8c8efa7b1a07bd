package httpapi

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/stream/multi"
	"github.com/httpkv/httpkv/wire"
)

// What the endpoints of /v1/watch/streams read of a request: a watch of
// the wire, a cursor, the record of a shared stream.

// toWatch converts a watch from the wire; the range says what it reads.
func (j *watchRequestDoc) toWatch() (kv.WatchRequest, keyrange.Range, error) {
	sel, err := watchSelection(wire.Selector{Key: j.Key, KeyBase64: j.KeyBase64, RangeEnd: j.RangeEnd, RangeEndBase64: j.RangeEndBase64, Prefix: j.Prefix, FromKey: j.FromKey})
	if err != nil {
		return kv.WatchRequest{}, sel, err
	}
	if j.StartRevision < 0 {
		return kv.WatchRequest{}, sel, badRequest("start_revision must not be negative")
	}
	req := kv.WatchRequest{Key: sel.Key, End: sel.End, StartRevision: j.StartRevision, PrevKV: j.PrevKV, ProgressNotify: j.ProgressNotify}
	q := wire.NewQuery(url.Values{"filters": {j.Filters}}, wire.Params{"filters"})
	req.NoPut, req.NoDelete = q.Filters()
	if q.Err() != nil {
		return kv.WatchRequest{}, sel, q.Err()
	}
	return req, sel, nil
}

// watchSelection is the range of a watch: as KeyRange, but no key, or
// an empty one with prefix, means every key, as in GET /v1/watch.
func watchSelection(j wire.Selector) (keyrange.Range, error) {
	k, hasKey, err := wire.Twin("key", j.Key, j.KeyBase64)
	if err != nil {
		return keyrange.Range{}, err
	}
	hasEnd := j.RangeEnd != nil || j.RangeEndBase64 != nil
	switch {
	case !hasKey && (hasEnd || j.FromKey):
		return keyrange.Range{}, badRequest("range_end and from_key need a key")
	case !hasKey, len(k) == 0 && j.Prefix && !hasEnd && !j.FromKey:
		return keyrange.All(), nil
	}
	return j.KeyRange()
}

// streamCursor reads the cursor to resume after: Last-Event-ID, or the
// last_event_id query parameter.
func streamCursor(r *http.Request) (int64, bool, *apiError) {
	s := cursorText(r)
	if s == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, false, badRequest("Last-Event-ID must be the id of a message of this stream, not %q", s)
	}
	return n, true, nil
}

// cursorText is the cursor a request gives: Last-Event-ID, or the
// last_event_id query parameter.
func cursorText(r *http.Request) string {
	if s := strings.TrimSpace(r.Header.Get("Last-Event-ID")); s != "" {
		return s
	}
	return r.URL.Query().Get("last_event_id")
}

// openSharedStream reads the record of the request's stream for its
// caller and its cursor, and returns what makes the connection its
// reader (multi.Registry.AttachShared); nil once it answered an error.
func (h *Handler) openSharedStream(w http.ResponseWriter, r *http.Request) func() (*multi.Conn, error) {
	g := h.wstreams
	var authChanged <-chan struct{}
	if streamAuth, ok := h.cfg.Authorizer.(streamAuthorizer); ok {
		authChanged = streamAuth.Changed()
	}
	owner, err := h.streamOwner(r)
	if err != nil {
		h.writeError(w, r, err)
		return nil
	}
	var cur *multi.Cursor
	if s := cursorText(r); s != "" {
		if cur, err = multi.ParseCursor(s); err != nil {
			h.writeError(w, r, err)
			return nil
		}
	}
	rec, err := g.Record(r.Context(), pathParam(r, "stream"), owner)
	if err != nil {
		h.writeError(w, r, err)
		return nil
	}
	return func() (*multi.Conn, error) {
		return g.AttachShared(r.Context(), rec, cur, authChanged)
	}
}
