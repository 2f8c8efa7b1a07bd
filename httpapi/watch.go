package httpapi

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5/middleware"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/stream"

	"github.com/httpkv/httpkv/wire"
)

// watchParams are the query parameters of GET /v1/watch.
var watchParams = wire.ParamsOf(wire.SelectorParams, wire.Params{"start_revision", "prev_kv", "filters", "progress_notify"})

// watch serves GET /v1/watch: one watcher per stream, framed as SSE (or
// NDJSON on request) until the client leaves, the watch ends (compacted,
// canceled) or the server shuts down.
//
//	@Summary		Watch keys as Server-Sent Events
//	@Description	Streams the changes of key alone, [key, range_end), every key with the prefix key (prefix=true), every key >= key (from_key=true), or, with no key, every key, as text/event-stream (or, with Accept: application/x-ndjson, one JSON object a line). One watcher per stream. The stream opens with retry: 1000 and then these messages, each a data line holding a WatchMessage whose type field says which it is (the same as the SSE event's name, or events for the default one):
//	@Description	- created (event created): {type, header, start_revision}, the first revision the watch reports; its id is start_revision - 1 when that is a revision.
//	@Description	- events (the default event, message): {type, header, events}, with id the revision; all events of that revision that match the watch, in order (a txn is never split).
//	@Description	- progress (event progress): {type, header}, with id the revision: a bookmark saying every event up to it has been sent (progress_notify=true, when idle).
//	@Description	- compacted (event compacted): {type, header, compact_revision}, after retry: 60000, when the history the watch needs is compacted (at the start, on a resume, or for a watcher that fell behind); the stream ends. List again and watch from the list's revision + 1.
//	@Description	- canceled (event canceled): {type, reason}, when the server cannot go on: shutting down, or the credentials the stream was opened with are no longer good (reasons token expired, token revoked, user deleted, auth disabled, auth enabled: a token is needed, permission denied); the stream ends.
//	@Description	Comment lines (: keep-alive) keep idle connections open. On one stream and across resumes by Last-Event-ID: ordered, no duplicates, no gaps, atomic per revision.
//	@Tags			watch
//	@ID				watch
//	@Produce		event-stream,application/x-ndjson
//	@Param			key					query		string			false	"The key, or the start of the range; none means every key."
//	@Param			key_base64			query		string			false	"The key in standard base64, for bytes that are not UTF-8."	format(byte)
//	@Param			range_end			query		string			false	"The end of the range [key, range_end). At most one of range_end, prefix and from_key."
//	@Param			range_end_base64	query		string			false	"range_end in standard base64."	format(byte)
//	@Param			prefix				query		boolean			false	"Every key with the prefix key (an empty key: every key)."
//	@Param			from_key			query		boolean			false	"Every key >= key."
//	@Param			start_revision		query		integer			false	"Report events from this revision on; 0 or none: from the next one. It may be exactly the compact revision."	minimum(0)	format(int64)
//	@Param			prev_kv				query		boolean			false	"Give each event the key as it was before, in prev_kv."
//	@Param			filters				query		string			false	"A comma list of noput and nodelete: leave those events out."
//	@Param			progress_notify		query		boolean			false	"Send progress bookmarks while idle."
//	@Param			Last-Event-ID		header		integer			false	"Resume after this revision, as a browser does on reconnecting: overrides start_revision with it + 1."	minimum(0)	format(int64)
//	@Param			Accept				header		string			false	"application/x-ndjson for NDJSON instead of Server-Sent Events."
//	@Success		200					{object}	watchMessageDoc	"The stream of watch messages: text/event-stream, or NDJSON lines when asked for. Compaction is reported in-band, still with 200."
//	@Failure		400					{object}	wire.ErrorResponse		"invalid_argument: a bad selector, parameter, filter or Last-Event-ID."
//	@Failure		401					{object}	wire.ErrorResponse		"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403					{object}	wire.ErrorResponse		"permission_denied: the caller may not read every key of the range."
//	@Failure		429					{object}	wire.ErrorResponse		"too_many_requests: past --max-stream-connections or --max-watchers, for the server or for the caller (its user, or its address with auth off); the connection closes."
//	@Failure		500					{object}	wire.ErrorResponse		"internal: an unexpected failure."
//	@Failure		503					{object}	wire.ErrorResponse		"unavailable: the server is shutting down."
//	@Header			200					{integer}	X-Revision		"The store's revision when the watch started."
//	@Header			200					{string}	Cache-Control	"no-cache"
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Security		AccessToken
//	@Router			/v1/watch [get]
func (h *Handler) watch(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r, watchParams)
	sel := q.Selector(false)
	req := kv.WatchRequest{
		Key:            sel.Key,
		End:            sel.End,
		StartRevision:  q.Int64("start_revision", 0),
		PrevKV:         q.Bool("prev_kv"),
		ProgressNotify: q.Bool("progress_notify"),
	}
	req.NoPut, req.NoDelete = q.Filters()
	if id := strings.TrimSpace(r.Header.Get("Last-Event-ID")); id != "" {
		// Resume after the last message the client saw.
		n, err := strconv.ParseInt(id, 10, 64)
		if err != nil || n < 0 || n == 1<<63-1 {
			q.Failf("Last-Event-ID must be a revision, not %q", id)
		}
		req.StartRevision = n + 1
	}
	if q.Err() != nil {
		h.writeError(w, r, q.Err())
		return
	}
	// Take the change signal before checking, so no change slips between.
	var authChanged <-chan struct{}
	var caller streamCaller
	streamAuth, _ := h.cfg.Authorizer.(streamAuthorizer)
	if streamAuth != nil {
		authChanged = streamAuth.Changed()
	}
	access := Access{Read: []keyrange.Range{sel}}
	if !h.authorize(w, r, access) {
		return
	}
	if streamAuth != nil {
		var err error
		if caller, err = streamAuth.Identify(r); err != nil {
			h.writeError(w, r, err)
			return
		}
	}
	enc := stream.Encoder{NDJSON: strings.Contains(r.Header.Get("Accept"), "application/x-ndjson")}
	release, ok := h.admitStream(w, r, 1)
	if !ok {
		return
	}
	bw, err := h.cfg.Backend.Watch(r.Context(), req)
	if err != nil {
		release()
		h.writeError(w, r, err)
		return
	}
	// The revision watchers had seen when this one began: start_revision
	// - 1 for a watch from now. The store's may be ahead of it.
	rev := bw.Revision()
	hd := w.Header()
	hd.Set("Content-Type", enc.ContentType())
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Accel-Buffering", "no")
	setRevision(w, rev)
	ws := &stream.Watch{Stream: bw, Enc: enc, Rev: rev, Reason: streamEndReason, RequestID: middleware.GetReqID(r.Context()), Log: h.cfg.Logger}
	guard := streamGuard(streamAuth, authChanged, caller, access)
	h.runStream(w, r, func(s streamSink) { h.loop().Run(s, ws, guard) }, bw.Close, release)
}
