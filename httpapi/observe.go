package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/httpkv/httpkv/concurrency"
	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/stream"

	"github.com/httpkv/httpkv/wire"
)

// observe serves GET /v1/elections/{name}/observe: the election's
// leadership as Server-Sent Events.
//
//	@Summary		Observe the leader as Server-Sent Events
//	@Description	Streams the leadership of the election called name as text/event-stream, as etcd's v3election Observe but exact: one message per change, at the revision it happened, even when several happen close together. The stream opens with retry: 1000 and the state now (unless resuming), then these messages, each JSON object starting with its "type":
//	@Description	- the default event (message), with id the revision: {type: leader, header, kv}, the leader's key and value from that revision on: a new leader, or the leader proclaiming a value.
//	@Description	- event no_leader, with id the revision: {type: no_leader, header}, the office is empty from that revision on.
//	@Description	- event compacted: {type: compacted, header, compact_revision}, after retry: 60000, when the history needed to resume is compacted; the stream ends. Observe again without Last-Event-ID.
//	@Description	- event canceled: {type: canceled, reason}, when the server cannot go on (permission revoked, shutting down); the stream ends.
//	@Description	Comment lines (: keep-alive) keep idle connections open. Reconnecting with Last-Event-ID resumes right after that revision: nothing is repeated or skipped.
//	@Tags			elections
//	@ID				electionObserve
//	@Produce		event-stream
//	@Param			name			path		string				true	"The election's name, one path segment, percent-decoded (a slash in it is %2F). Not empty."
//	@Param			Last-Event-ID	header		integer				false	"Resume after this revision, as a browser does on reconnecting: only the changes after it are sent."	minimum(0)	format(int64)
//	@Success		200				{object}	observeMessageDoc	"The stream of observations. Compaction is reported in-band, still with 200."
//	@Failure		400				{object}	wire.ErrorResponse			"invalid_argument: an empty name, a bad Last-Event-ID; future_revision: Last-Event-ID is above the store's revision."
//	@Failure		401				{object}	wire.ErrorResponse			"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403				{object}	wire.ErrorResponse			"permission_denied: the caller may not read every key with the prefix name/."
//	@Failure		429				{object}	wire.ErrorResponse			"too_many_requests: past --max-stream-connections or --max-watchers, for the server or for the caller (its user, or its address with auth off); the connection closes."
//	@Failure		500				{object}	wire.ErrorResponse			"internal: an unexpected failure."
//	@Failure		503				{object}	wire.ErrorResponse			"unavailable: the server is shutting down."
//	@Header			200				{integer}	X-Revision			"The revision the stream starts after."
//	@Header			200				{string}	Cache-Control		"no-cache"
//	@Header			401				{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Security		AccessToken
//	@Router			/v1/elections/{name}/observe [get]
func (h *Handler) observe(w http.ResponseWriter, r *http.Request) {
	after, aerr := lastEventID(r)
	if aerr != nil {
		h.writeError(w, r, aerr)
		return
	}
	// Take the change signal before checking, so no change slips between.
	var authChanged <-chan struct{}
	var caller streamCaller
	streamAuth, _ := h.cfg.Authorizer.(streamAuthorizer)
	if streamAuth != nil {
		authChanged = streamAuth.Changed()
	}
	b, name, ok := h.nameRequest(w, r, "/v1/elections/", "/observe", nil, false)
	if !ok {
		return
	}
	access := nameAccess(name, false)
	if streamAuth != nil {
		var err error
		if caller, err = streamAuth.Identify(r); err != nil {
			h.writeError(w, r, err)
			return
		}
	}
	release, ok := h.admitStream(w, r, 1)
	if !ok {
		return
	}
	// The observer outlives the request's context when the stream takes
	// its connection over; Close ends it.
	obs, first, err := concurrency.Observe(context.WithoutCancel(r.Context()), b, name, after)
	if err != nil && !errors.Is(err, kv.ErrCompacted) {
		release()
		h.writeError(w, r, err)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", stream.Encoder{}.ContentType())
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Accel-Buffering", "no")
	if err != nil {
		// Compacted: said in-band, as a watch does, since a browser
		// cannot read the status of a failed EventSource request.
		release()
		setRevision(w, h.cfg.Backend.Rev())
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(h.observeEnd(nil, err))
		return
	}
	setRevision(w, first.Revision)
	st := &observeStream{h: h, obs: obs}
	if after == 0 {
		st.first = &first
	}
	guard := streamGuard(streamAuth, authChanged, caller, access)
	h.runStream(w, r, func(s streamSink) { h.loop().Run(s, st, guard) }, obs.Close, release)
}

// lastEventID reads the Last-Event-ID header as a revision to resume
// after; 0 when absent.
func lastEventID(r *http.Request) (int64, *apiError) {
	id := strings.TrimSpace(r.Header.Get("Last-Event-ID"))
	if id == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n < 0 {
		return 0, badRequest("Last-Event-ID must be a revision, not %q", id)
	}
	return n, nil
}

// observeStream is one open observe as the stream loop drives it: its
// observer, and the state to send first.
type observeStream struct {
	h     *Handler
	obs   *concurrency.Observer
	first *concurrency.Observation // nil when resuming
}

// Open writes the retry delay and, unless resuming, the state now.
func (st *observeStream) Open(s streamSink) bool {
	out := stream.Encoder{}.Retry(nil, 1000)
	if st.first != nil {
		out = appendObservation(out, *st.first)
	}
	return s.Send(out)
}

func (st *observeStream) Ready() <-chan struct{} { return st.obs.Ready() }
func (st *observeStream) Done() <-chan struct{}  { return nil }
func (st *observeStream) Close()                 { st.obs.Close() }

// Take writes the observations ready; the observer's end is the
// stream's.
func (st *observeStream) Take(s streamSink) (wrote, end bool) {
	obs, err := st.obs.Next()
	var out []byte
	for _, o := range obs {
		out = appendObservation(out, o)
	}
	if err != nil {
		out = st.h.observeEnd(out, err)
	}
	if len(out) == 0 {
		return false, false
	}
	return true, !s.Send(out) || err != nil
}

func (st *observeStream) KeepAlive(s streamSink) bool {
	return s.Send(stream.Encoder{}.KeepAlive(nil))
}

// End writes a canceled message, as a watch does.
func (st *observeStream) End(s streamSink, why error) {
	b, _, _ := stream.Encoder{}.Response(nil, nil, &kv.WatchResponse{Canceled: true, CancelReason: streamEndReason(why)})
	s.Send(b)
}

// appendObservation appends one observation as an SSE message whose id
// is its revision: the leader's key as a default message, or no_leader.
func appendObservation(b []byte, o concurrency.Observation) []byte {
	p := wire.AppendHeader(nil, o.Revision)
	if o.Leader == nil {
		return stream.Encoder{}.Frame(b, "no_leader", o.Revision, append(p, '}'))
	}
	p = wire.AppendKV(append(p, `,"kv":`...), o.Leader, true)
	return stream.Encoder{}.FrameTyped(b, "", "leader", o.Revision, append(p, '}'))
}

// observeEnd appends the last message of a stream that err ended:
// compacted for compaction, canceled otherwise.
func (h *Handler) observeEnd(b []byte, err error) []byte {
	end := kv.WatchResponse{Canceled: true, CancelReason: "the store ended the stream"}
	var ce *kv.CompactedError
	switch {
	case errors.As(err, &ce):
		end = kv.WatchResponse{CompactRevision: ce.CompactRevision, Revision: h.cfg.Backend.Rev()}
	case !errors.Is(err, concurrency.ErrWatchEnded):
		h.cfg.Logger.Error().Err(err).Msg("observe stream")
		end.CancelReason = "internal error"
	}
	b, _, _ = stream.Encoder{}.Response(b, nil, &end)
	return b
}
