package httpapi

import (
	"bytes"
	"net/http"
	"strconv"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/stream"
	"github.com/httpkv/httpkv/stream/multi"
	"github.com/httpkv/httpkv/wire"
)

// The endpoints of /v1/watch/streams: a stream carries many watchers,
// added and canceled while it runs, each message tagged with its
// watcher, resumable as a whole (see package stream/multi).

// readWatchStreamParams are the query parameters of GET
// /v1/watch/streams/{stream}.
var readWatchStreamParams = wire.Params{"last_event_id"}

// createWatchStream serves POST /v1/watch/streams.
//
//	@Summary		Create a stream of many watchers
//	@Description	Creates a watch stream, with the watches of the body if any (the body may be empty). Read it with GET /v1/watch/streams/{stream}; add and cancel watchers with the endpoints below it. The stream belongs to the user that created it (others get 404), and is dropped once it has had no connection for --watch-stream-idle-timeout (60 s). Each watch needs read permission on its range, as GET /v1/watch does.
//	@Tags			watch
//	@ID				createWatchStream
//	@Accept			json
//	@Produce		json
//	@Param			stream	body		watchStreamCreateDoc	false	"The first watches of the stream, if any."
//	@Success		201		{object}	watchStreamCreatedDoc	"Created: its id, and the watch_id of each watch of the body, in order."
//	@Failure		400		{object}	wire.ErrorResponse				"invalid_argument: malformed JSON, a bad selector, start_revision or filter."
//	@Failure		401		{object}	wire.ErrorResponse				"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403		{object}	wire.ErrorResponse				"permission_denied: the caller may not read every key of some watch's range."
//	@Failure		413		{object}	wire.ErrorResponse				"request_too_large: the body is over the server's --max-request-bytes."
//	@Failure		429		{object}	wire.ErrorResponse				"too_many_requests: past --max-watch-streams, --max-watch-streams-per-user, --max-watchers-per-stream, --max-watchers or --max-watchers-per-user."
//	@Failure		500		{object}	wire.ErrorResponse				"internal: an unexpected failure."
//	@Failure		503		{object}	wire.ErrorResponse				"unavailable: the server is shutting down."
//	@Header			401		{string}	WWW-Authenticate		"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/watch/streams [post]
func (h *Handler) createWatchStream(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	var in watchStreamCreateDoc
	if len(bytes.TrimSpace(body)) > 0 {
		if err := wire.Decode(body, &in); err != nil {
			h.writeError(w, r, err)
			return
		}
	}
	if most := h.wstreams.Config().MaxWatchers; len(in.Watches) > most {
		h.writeError(w, r, multi.TooManyWatchers(most))
		return
	}
	reqs := make([]kv.WatchRequest, len(in.Watches))
	access := Access{Read: make([]keyrange.Range, len(in.Watches))}
	for i := range in.Watches {
		if reqs[i], access.Read[i], err = in.Watches[i].toWatch(); err != nil {
			h.writeError(w, r, err)
			return
		}
	}
	// Take the change signal before checking, so no change slips between.
	var authChanged <-chan struct{}
	if streamAuth, ok := h.cfg.Authorizer.(streamAuthorizer); ok {
		authChanged = streamAuth.Changed()
	}
	if !h.authorize(w, r, access) {
		return
	}
	owner, err := h.streamOwner(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if h.wstreams.Shared() {
		id, ids, err := h.wstreams.SharedCreate(r.Context(), owner, clientKey(owner, r), reqs)
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		out := make([]watchAddedDoc, len(ids))
		for i, wid := range ids {
			out[i].WatchID = wid
		}
		writeJSON(w, http.StatusCreated, watchStreamCreatedDoc{Stream: id, Watches: out})
		return
	}
	ms, err := h.wstreams.Create(owner, clientKey(owner, r), authChanged)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	out := make([]watchAddedDoc, len(reqs))
	for i := range reqs {
		id, err := ms.AddWatch(reqs[i])
		if err != nil {
			ms.Delete("stream deleted")
			h.writeError(w, r, err)
			return
		}
		out[i].WatchID = id
	}
	writeJSON(w, http.StatusCreated, watchStreamCreatedDoc{Stream: ms.ID(), Watches: out})
}

// lookupStream finds the stream of the request's path, if it is the
// caller's; it answers 404 otherwise, as if the stream did not exist.
func (h *Handler) lookupStream(w http.ResponseWriter, r *http.Request) (*multi.Stream, bool) {
	owner, err := h.streamOwner(r)
	if err != nil {
		h.writeError(w, r, err)
		return nil, false
	}
	ms := h.wstreams.Get(pathParam(r, "stream"))
	if ms == nil || ms.Owner() != owner {
		h.writeError(w, r, multi.ErrStreamNotFound)
		return nil, false
	}
	return ms, true
}

// readWatchStream serves GET /v1/watch/streams/{stream}.
//
//	@Summary		Read a stream of many watchers as Server-Sent Events
//	@Description	Streams the messages of every watcher of the stream as text/event-stream. The stream opens with retry: 1000. Each message's data is a WatchStreamMessage: those of GET /v1/watch with the watcher's watch_id after type, created when a watcher starts, events one revision of its events, progress a bookmark, compacted and canceled its end (they end that watcher only; canceled reasons: watch deleted, stream deleted, permission denied, cursor too old, shutting down, the backend failed, user deleted, auth enabled: a token is needed, auth disabled, and over etcd too many watchers on this gateway (--max-watchers)). Per watcher: ordered, no duplicates, no gaps, atomic per revision. Every revision ready across the watchers goes out in one write.
//	@Description	Every message has an id, an opaque cursor. Reconnecting with the last one received as Last-Event-ID (a browser's EventSource does it by itself; last_event_id in the query does it for a new EventSource) resumes every watcher right after it, watchers added since included. The server remembers the last --watch-stream-resume-bytes (4 MiB) of what it wrote; a cursor older than that ends every watcher with canceled (cursor too old) and the stream with them. Without a cursor, a stream never read before starts from the first message; one read before answers 400.
//	@Description	One connection reads a stream at a time: a new GET takes the stream over and the older connection ends. The connection also ends, the stream going on, when its token expires or is revoked: reconnect with a new token and Last-Event-ID. A stream with no connection for --watch-stream-idle-timeout (60 s) is dropped; then this answers 404. Over etcd (--backend etcd) a stream is the deployment's: any gateway reads and resumes it with the id received from another (the id then carries where every watcher stands), a GET through one takes it over from a connection on another, and a gateway shutting down ends its connection without ending the watchers.
//	@Tags			watch
//	@ID				readWatchStream
//	@Produce		event-stream
//	@Param			stream			path		string					true	"The stream's id, from POST /v1/watch/streams."
//	@Param			Last-Event-ID	header		string					false	"Resume after the message with this id."
//	@Param			last_event_id	query		string					false	"Last-Event-ID, for a client that cannot set headers; the header wins."
//	@Success		200				{object}	watchStreamMessageDoc	"The messages of every watcher of the stream."
//	@Failure		400				{object}	wire.ErrorResponse				"invalid_argument: a Last-Event-ID that is not one of this stream's, or none for a stream read before."
//	@Failure		401				{object}	wire.ErrorResponse				"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		404				{object}	wire.ErrorResponse				"stream_not_found: no such stream (deleted, dropped, or another user's)."
//	@Failure		429				{object}	wire.ErrorResponse				"too_many_requests: past --max-stream-connections, for the server or for the caller (its user, or its address with auth off); the connection closes."
//	@Failure		500				{object}	wire.ErrorResponse				"internal: an unexpected failure."
//	@Failure		503				{object}	wire.ErrorResponse				"unavailable: the server is shutting down."
//	@Header			200				{string}	Cache-Control			"no-cache"
//	@Header			401				{string}	WWW-Authenticate		"Bearer"
//	@Security		BearerAuth
//	@Security		AccessToken
//	@Router			/v1/watch/streams/{stream} [get]
func (h *Handler) readWatchStream(w http.ResponseWriter, r *http.Request) {
	var open func() (*multi.Conn, error)
	if h.wstreams.Shared() {
		if open = h.openSharedStream(w, r); open == nil {
			return
		}
	} else {
		ms, ok := h.lookupStream(w, r)
		if !ok {
			return
		}
		cursor, has, aerr := streamCursor(r)
		if aerr != nil {
			h.writeError(w, r, aerr)
			return
		}
		open = func() (*multi.Conn, error) { return ms.Attach(cursor, has) }
	}
	var authChanged <-chan struct{}
	var caller streamCaller
	streamAuth, _ := h.cfg.Authorizer.(streamAuthorizer)
	if streamAuth != nil {
		authChanged = streamAuth.Changed()
		var err error
		if caller, err = streamAuth.Identify(r); err != nil {
			h.writeError(w, r, err)
			return
		}
	}
	release, ok := h.admitStream(w, r, 0)
	if !ok {
		return
	}
	mc, err := open()
	if err != nil {
		release()
		h.writeError(w, r, err)
		return
	}
	guard := connGuard(streamAuth, authChanged, caller)
	hd := w.Header()
	hd.Set("Content-Type", stream.Encoder{}.ContentType())
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Accel-Buffering", "no")
	h.runStream(w, r, func(s streamSink) { h.loop().Run(s, mc, guard) }, mc.Abandon, release)
}

// addStreamWatch serves POST /v1/watch/streams/{stream}/watches.
//
//	@Summary		Add a watcher to a stream
//	@Description	Starts a watcher on the stream: its created message, then its events, come on the stream tagged with the watch_id this answers. It needs read permission on its range, as GET /v1/watch does.
//	@Tags			watch
//	@ID				addStreamWatch
//	@Accept			json
//	@Produce		json
//	@Param			stream	path		string				true	"The stream's id."
//	@Param			watch	body		watchRequestDoc		true	"What to watch, as the query of GET /v1/watch."
//	@Success		201		{object}	watchAddedDoc		"Added."
//	@Failure		400		{object}	wire.ErrorResponse			"invalid_argument: malformed JSON, a bad selector, start_revision or filter."
//	@Failure		401		{object}	wire.ErrorResponse			"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403		{object}	wire.ErrorResponse			"permission_denied: the caller may not read every key of the range."
//	@Failure		404		{object}	wire.ErrorResponse			"stream_not_found: no such stream."
//	@Failure		413		{object}	wire.ErrorResponse			"request_too_large: the body is over the server's --max-request-bytes."
//	@Failure		429		{object}	wire.ErrorResponse			"too_many_requests: the stream has --max-watchers-per-stream watchers, or the server or the stream's owner its --max-watchers or --max-watchers-per-user."
//	@Failure		500		{object}	wire.ErrorResponse			"internal: an unexpected failure."
//	@Failure		503		{object}	wire.ErrorResponse			"unavailable: the server is shutting down."
//	@Header			401		{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/watch/streams/{stream}/watches [post]
func (h *Handler) addStreamWatch(w http.ResponseWriter, r *http.Request) {
	var add func(kv.WatchRequest) (int64, error)
	if h.wstreams.Shared() {
		owner, err := h.streamOwner(r)
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		stream := pathParam(r, "stream")
		// The record is read before the body, so that a stream that is
		// not the caller's answers 404 whatever the body.
		if _, err := h.wstreams.Record(r.Context(), stream, owner); err != nil {
			h.writeError(w, r, err)
			return
		}
		add = func(req kv.WatchRequest) (int64, error) {
			return h.wstreams.SharedAddWatch(r.Context(), stream, owner, req)
		}
	} else {
		ms, ok := h.lookupStream(w, r)
		if !ok {
			return
		}
		add = ms.AddWatch
	}
	var in watchRequestDoc
	if err := decodeJSON(r, &in); err != nil {
		h.writeError(w, r, err)
		return
	}
	req, sel, err := in.toWatch()
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if !h.authorize(w, r, Access{Read: []keyrange.Range{sel}}) {
		return
	}
	id, err := add(req)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, watchAddedDoc{WatchID: id})
}

// deleteStreamWatch serves DELETE /v1/watch/streams/{stream}/watches/{watch_id}.
//
//	@Summary		Cancel a watcher of a stream
//	@Description	Ends the watcher: the stream carries canceled (reason watch deleted) for it, after every message it had before.
//	@Tags			watch
//	@ID				deleteStreamWatch
//	@Produce		json
//	@Param			stream		path		string		true	"The stream's id."
//	@Param			watch_id	path		integer		true	"The watcher's watch_id."	minimum(1)	format(int64)
//	@Success		200			{object}	wire.Empty	"Canceled."
//	@Failure		400			{object}	wire.ErrorResponse	"invalid_argument: a watch_id that is not a positive integer."
//	@Failure		401			{object}	wire.ErrorResponse	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		404			{object}	wire.ErrorResponse	"stream_not_found: no such stream; watch_not_found: no such watcher, or it has ended."
//	@Failure		500			{object}	wire.ErrorResponse	"internal: an unexpected failure."
//	@Header			401			{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/watch/streams/{stream}/watches/{watch_id} [delete]
func (h *Handler) deleteStreamWatch(w http.ResponseWriter, r *http.Request) {
	var cancel func(id int64) error
	if h.wstreams.Shared() {
		owner, err := h.streamOwner(r)
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		cancel = func(id int64) error {
			return h.wstreams.SharedCancelWatch(r.Context(), pathParam(r, "stream"), owner, id)
		}
	} else {
		ms, ok := h.lookupStream(w, r)
		if !ok {
			return
		}
		cancel = func(id int64) error { return ms.CancelWatch(id, "watch deleted") }
	}
	s := pathParam(r, "watch_id")
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id < 1 {
		h.writeError(w, r, badRequest("watch_id must be a positive integer, not %q", s))
		return
	}
	if err := cancel(id); err != nil {
		h.writeError(w, r, err)
		return
	}
	writeRawJSON(w, http.StatusOK, []byte("{}\n"))
}

// deleteWatchStream serves DELETE /v1/watch/streams/{stream}.
//
//	@Summary		Delete a stream of many watchers
//	@Description	Ends every watcher of the stream (canceled, reason stream deleted, on the stream) and then the stream: its connection closes once it has written them, and the stream answers 404 from then on.
//	@Tags			watch
//	@ID				deleteWatchStream
//	@Produce		json
//	@Param			stream	path		string		true	"The stream's id."
//	@Success		200		{object}	wire.Empty	"Deleted."
//	@Failure		401		{object}	wire.ErrorResponse	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		404		{object}	wire.ErrorResponse	"stream_not_found: no such stream."
//	@Failure		500		{object}	wire.ErrorResponse	"internal: an unexpected failure."
//	@Header			401		{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/watch/streams/{stream} [delete]
func (h *Handler) deleteWatchStream(w http.ResponseWriter, r *http.Request) {
	if h.wstreams.Shared() {
		owner, err := h.streamOwner(r)
		if err == nil {
			err = h.wstreams.SharedDelete(r.Context(), pathParam(r, "stream"), owner)
		}
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		writeRawJSON(w, http.StatusOK, []byte("{}\n"))
		return
	}
	ms, ok := h.lookupStream(w, r)
	if !ok {
		return
	}
	if !ms.Delete("stream deleted") {
		h.writeError(w, r, multi.ErrStreamNotFound)
		return
	}
	writeRawJSON(w, http.StatusOK, []byte("{}\n"))
}
