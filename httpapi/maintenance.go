package httpapi

import (
	"context"
	"net/http"

	"github.com/httpkv/httpkv/kv"

	"github.com/httpkv/httpkv/wire"
)

// compact serves POST /v1/compact.
//
//	@Summary		Compact the history
//	@Description	Drops the history below revision: reads and watches below it answer compacted. physical=true waits until the space is reclaimed on disk.
//	@Tags			maintenance
//	@ID				compact
//	@Accept			json
//	@Produce		json
//	@Param			compaction	body		wire.CompactRequest	true	"The revision to compact to."
//	@Success		200			{object}	wire.HeaderResponse	"Compacted."
//	@Failure		400			{object}	wire.ErrorResponse			"invalid_argument: malformed JSON, a revision that is not positive; future_revision: a revision above the current one."
//	@Failure		401	{object}	wire.ErrorResponse	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403	{object}	wire.ErrorResponse	"permission_denied: only the root role may."
//	@Failure		410			{object}	wire.ErrorResponse			"compacted: the revision is at or below the compact revision."
//	@Failure		413			{object}	wire.ErrorResponse			"request_too_large: the body is over the server's --max-request-bytes."
//	@Failure		429			{object}	wire.ErrorResponse			"too_many_requests: more request bytes are in flight than --max-inflight-request-bytes allows; retry later (Retry-After)."
//	@Failure		500	{object}	wire.ErrorResponse	"internal: an unexpected failure."
//	@Failure		501	{object}	wire.ErrorResponse	"not_supported: a gateway over etcd with --etcd-namespace and without --etcd-cluster-maintenance: etcd compacts the whole cluster, every deployment on it."
//	@Failure		503	{object}	wire.ErrorResponse	"unavailable: the server is shutting down or its backend failed."
//	@Header			200	{integer}	X-Revision	"The store's revision when the request was served."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/compact [post]
func (h *Handler) compact(w http.ResponseWriter, r *http.Request) {
	var req wire.CompactRequest
	if err := decodeJSON(r, &req); err != nil {
		h.writeError(w, r, err)
		return
	}
	if req.Revision <= 0 {
		h.writeError(w, r, badRequest("revision must be a positive revision"))
		return
	}
	if !h.authorize(w, r, Access{Admin: true}) {
		return
	}
	if err := h.cfg.Backend.Compact(r.Context(), req.Revision, req.Physical); err != nil {
		if r.Context().Err() != nil {
			return // the client left while the space was reclaimed
		}
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.HeaderResponse{Header: h.header(w)})
}

// status serves GET /v1/status.
//
//	@Summary		Server status
//	@Description	The server's version, revisions, backend size, counts of keys, leases and watchers, and active alarms.
//	@Tags			maintenance
//	@ID				status
//	@Produce		json
//	@Success		200	{object}	wire.Status	"The status."
//	@Failure		401	{object}	wire.ErrorResponse	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403	{object}	wire.ErrorResponse	"permission_denied: only the root role may."
//	@Failure		500	{object}	wire.ErrorResponse	"internal: an unexpected failure."
//	@Failure		503	{object}	wire.ErrorResponse	"unavailable: the server is shutting down or its backend failed."
//	@Header			200	{integer}	X-Revision	"The store's revision when the request was served."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/status [get]
func (h *Handler) status(w http.ResponseWriter, r *http.Request) {
	if !h.authorize(w, r, Access{Admin: true}) {
		return
	}
	st, err := h.cfg.Backend.Status(r.Context())
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	ws := st.Watchers
	setRevision(w, st.Revision)
	writeJSON(w, http.StatusOK, wire.Status{
		Header: wire.ResponseHeader{Revision: st.Revision}, Version: h.cfg.Version,
		Revision: st.Revision, CompactRevision: st.CompactRevision,
		DBSize: st.DBSize, DBSizeInUse: st.DBSizeInUse, Keys: st.Keys, Leases: int64(st.Leases),
		Watchers: wire.WatcherCounts{Synced: int64(ws.Synced), Unsynced: int64(ws.Unsynced), Victims: int64(ws.Victims)},
		Alarms:   alarmNames(st.Alarms),
	})
}

func alarmNames(as []kv.Alarm) []string {
	names := make([]string, 0, len(as))
	for _, a := range as {
		names = append(names, string(a))
	}
	return names
}

// defrag serves POST /v1/defrag.
//
//	@Summary		Defragment the backend
//	@Description	Rewrites the backend file without its free pages, and reports its new size.
//	@Tags			maintenance
//	@ID				defragment
//	@Produce		json
//	@Success		200	{object}	wire.DefragResponse	"Defragmented."
//	@Failure		401	{object}	wire.ErrorResponse	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403	{object}	wire.ErrorResponse	"permission_denied: only the root role may."
//	@Failure		500	{object}	wire.ErrorResponse	"internal: an unexpected failure."
//	@Failure		501	{object}	wire.ErrorResponse	"not_supported: a gateway over etcd with --etcd-namespace and without --etcd-cluster-maintenance: defragmentation is of the whole cluster's members."
//	@Failure		503	{object}	wire.ErrorResponse	"unavailable: the server is shutting down or its backend failed."
//	@Header			200	{integer}	X-Revision	"The store's revision when the request was served."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/defrag [post]
func (h *Handler) defrag(w http.ResponseWriter, r *http.Request) {
	if !h.authorize(w, r, Access{Admin: true}) {
		return
	}
	size, err := h.cfg.Backend.Defrag(r.Context())
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.DefragResponse{Header: h.header(w), DBSize: size})
}

// listAlarms serves GET /v1/alarms.
//
//	@Summary		List active alarms
//	@Description	NOSPACE is active once a write would take the backend past --quota-backend-bytes: writes then answer 507 until it is disarmed.
//	@Tags			maintenance
//	@ID				listAlarms
//	@Produce		json
//	@Success		200	{object}	wire.Alarms	"The active alarms."
//	@Failure		401	{object}	wire.ErrorResponse	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403	{object}	wire.ErrorResponse	"permission_denied: only the root role may."
//	@Failure		500	{object}	wire.ErrorResponse	"internal: an unexpected failure."
//	@Failure		503	{object}	wire.ErrorResponse	"unavailable: the server is shutting down or its backend failed."
//	@Header			200	{integer}	X-Revision	"The store's revision when the request was served."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/alarms [get]
func (h *Handler) listAlarms(w http.ResponseWriter, r *http.Request) {
	if !h.authorize(w, r, Access{Admin: true}) {
		return
	}
	alarms, err := h.cfg.Backend.Alarms(r.Context())
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.Alarms{Header: h.header(w), Alarms: alarmNames(alarms)})
}

// disarmAlarms serves DELETE /v1/alarms: it clears NOSPACE. A write that
// still does not fit raises it again.
//
//	@Summary		Disarm NOSPACE
//	@Description	Clears the NOSPACE alarm once space is back (after a compaction and a defragmentation); a write that still does not fit raises it again.
//	@Tags			maintenance
//	@ID				disarmAlarms
//	@Produce		json
//	@Success		200	{object}	wire.Alarms	"The alarms still active."
//	@Failure		401	{object}	wire.ErrorResponse	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403	{object}	wire.ErrorResponse	"permission_denied: only the root role may."
//	@Failure		500	{object}	wire.ErrorResponse	"internal: an unexpected failure."
//	@Failure		501	{object}	wire.ErrorResponse	"not_supported: a gateway over etcd with --etcd-namespace and without --etcd-cluster-maintenance: etcd's alarms are the whole cluster's."
//	@Failure		503	{object}	wire.ErrorResponse	"unavailable: the server is shutting down or its backend failed."
//	@Header			200	{integer}	X-Revision	"The store's revision when the request was served."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/alarms [delete]
func (h *Handler) disarmAlarms(w http.ResponseWriter, r *http.Request) {
	if !h.authorize(w, r, Access{Admin: true}) {
		return
	}
	alarms, err := h.cfg.Backend.DisarmAlarms(r.Context())
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.Alarms{Header: h.header(w), Alarms: alarmNames(alarms)})
}

// health serves GET /health: 503 while shutting down, when the backend has
// failed, or while an alarm is active (as etcd's /health).
//
//	@Summary		Health
//	@Description	200 while the server serves; 503, with the reason, while it shuts down, after its backend failed, while its backend cannot serve (over etcd: no member reachable, or no quorum; it answers within 2 s then too), or while an alarm is active (as etcd's /health). It needs no token.
//	@Tags			service
//	@ID				health
//	@Produce		json
//	@Success		200	{object}	wire.Health	"Healthy: health is true."
//	@Failure		503	{object}	wire.Health	"Not healthy: health is false, with the reason."
//	@Router			/health [get]
func (h *Handler) health(w http.ResponseWriter, r *http.Request) {
	if reason := healthReason(r.Context(), h.cfg.Backend, h.shuttingDown.Load()); reason != "" {
		writeJSON(w, http.StatusServiceUnavailable, wire.Health{Health: false, Reason: reason})
		return
	}
	writeJSON(w, http.StatusOK, wire.Health{Health: true})
}

// healthSource is what /health reads of the backend.
type healthSource interface {
	Failed() error
	Alarms(ctx context.Context) ([]kv.Alarm, error)
}

// healthReason says why the server is not healthy, or "" when it is. It
// reads the alarms once: the list can empty between two reads.
func healthReason(ctx context.Context, b healthSource, shuttingDown bool) string {
	switch {
	case shuttingDown:
		return "shutting down"
	case b.Failed() != nil:
		return "backend failed"
	}
	alarms, err := b.Alarms(ctx)
	switch {
	case err != nil:
		// What the backend says of it ("etcd cannot serve: ..."), when
		// it is said for clients.
		if code, msg, ok := kv.CodeOf(err); ok && code == kv.CodeUnavailable {
			return "backend unavailable: " + msg
		}
		return "backend unavailable"
	case len(alarms) > 0:
		return "ALARM " + string(alarms[0])
	}
	return ""
}
