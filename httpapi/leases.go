package httpapi

import (
	"encoding/binary"
	"encoding/json"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"

	"github.com/httpkv/httpkv/wire"
)

// maxLeaseID is the largest ID a JavaScript number holds exactly.
const maxLeaseID = 1<<53 - 1

func (h *Handler) leaseID(w http.ResponseWriter, r *http.Request) (int64, bool) {
	s := pathParam(r, "id")
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id < 1 || id > maxLeaseID {
		h.writeError(w, r, badRequest("lease ID must be an integer in [1, 2^53-1], not %q", s))
		return 0, false
	}
	return id, true
}

// header is the "header" of an answer: the store's current revision,
// which the X-Revision header carries too.
func (h *Handler) header(w http.ResponseWriter) wire.ResponseHeader {
	rev := h.cfg.Backend.Rev()
	setRevision(w, rev)
	return wire.ResponseHeader{Revision: rev}
}

// grantLease serves POST /v1/leases.
//
//	@Summary		Grant a lease
//	@Description	Grants a lease of ttl seconds. Keys put with it go, at one revision, when it expires or is revoked; a keep-alive renews it.
//	@Tags			leases
//	@ID				grantLease
//	@Accept			json
//	@Produce		json
//	@Param			lease	body		wire.LeaseGrantRequest	true	"The TTL, and the ID if the caller chooses it."
//	@Success		201		{object}	wire.LeaseResponse		"Granted."
//	@Failure		400		{object}	wire.ErrorResponse				"invalid_argument: malformed JSON, a TTL that is not positive, an ID out of [0, 2^53-1]."
//	@Failure		401	{object}	wire.ErrorResponse	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		409		{object}	wire.ErrorResponse				"already_exists: a lease with that ID exists."
//	@Failure		413		{object}	wire.ErrorResponse				"request_too_large: the body is over the server's --max-request-bytes."
//	@Failure		429		{object}	wire.ErrorResponse				"too_many_requests: as many leases are alive as --max-leases allows (over etcd, in this deployment), or more request bytes are in flight than --max-inflight-request-bytes allows; retry later (Retry-After)."
//	@Failure		507		{object}	wire.ErrorResponse				"no_space: the NOSPACE alarm is active."
//	@Failure		500	{object}	wire.ErrorResponse	"internal: an unexpected failure."
//	@Failure		503	{object}	wire.ErrorResponse	"unavailable: the server is shutting down, its backend failed, or it serves no leases."
//	@Header			200,201	{integer}	X-Revision	"The store's revision when the request was served."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/leases [post]
func (h *Handler) grantLease(w http.ResponseWriter, r *http.Request) {
	var req wire.LeaseGrantRequest
	if err := decodeJSON(r, &req); err != nil {
		h.writeError(w, r, err)
		return
	}
	if req.TTL <= 0 {
		h.writeError(w, r, badRequest("ttl must be a positive number of seconds"))
		return
	}
	if req.ID < 0 || req.ID > maxLeaseID {
		h.writeError(w, r, badRequest("id must be 0 (let the server choose) or in [1, 2^53-1]"))
		return
	}
	if !h.authorize(w, r, Access{}) {
		return
	}
	l, err := h.cfg.Backend.Grant(r.Context(), req.ID, req.TTL)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, wire.LeaseResponse{Header: h.header(w), ID: l.ID, TTL: l.TTL})
}

// listLeasesParams are the query parameters of GET /v1/leases.
var listLeasesParams = wire.Params{"limit", "page_token"}

// listLeases serves GET /v1/leases, one page at a time: a page holds at
// most wire.MaxListLimit IDs, so that no answer grows with the leases alive.
//
//	@Summary		List leases
//	@Description	Lists the IDs of the leases, by ascending ID, one page of at most limit at a time. Over etcd, the leases of this deployment (its --etcd-namespace) only.
//	@Description	Leases are not versioned: a page lists the leases alive when it is read, and next_page_token continues after the last ID of the page, whatever was granted or revoked meanwhile.
//	@Tags			leases
//	@ID				listLeases
//	@Produce		json
//	@Param			limit		query		integer			false	"Leases per page."	minimum(1)	maximum(10000)	default(1000)	format(int64)
//	@Param			page_token	query		string			false	"next_page_token of the previous page. Tokens are sealed by the server; one it did not issue for this list answers 400."
//	@Success		200			{object}	wire.LeaseList	"One page of the leases."
//	@Failure		400			{object}	wire.ErrorResponse		"invalid_argument: a limit out of [1, 10000], a page token the server did not issue for this list."
//	@Failure		401	{object}	wire.ErrorResponse	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		500	{object}	wire.ErrorResponse	"internal: an unexpected failure."
//	@Failure		503	{object}	wire.ErrorResponse	"unavailable: the server is shutting down, its backend failed, or it serves no leases."
//	@Header			200,201	{integer}	X-Revision	"The store's revision when the request was served."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/leases [get]
func (h *Handler) listLeases(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r, listLeasesParams)
	limit := q.Int64("limit", defaultListLimit)
	if q.Has("limit") && (limit < 1 || limit > wire.MaxListLimit) {
		q.Failf("limit must be between 1 and %d", wire.MaxListLimit)
	}
	var after int64
	if s := q.Get("page_token"); s != "" && q.Err() == nil {
		after = h.openLeasePage(q, s)
	}
	if q.Err() != nil {
		h.writeError(w, r, q.Err())
		return
	}
	if !h.authorize(w, r, Access{}) {
		return
	}
	ids, more, err := h.cfg.Backend.Leases(r.Context(), after, int(limit))
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	resp := wire.LeaseList{Header: h.header(w), Leases: make([]wire.LeaseListItem, len(ids)), More: more}
	for i, id := range ids {
		resp.Leases[i].ID = id
	}
	if more && len(ids) > 0 {
		resp.NextPageToken = h.tokens.Seal(wire.TokenLeases, binary.AppendUvarint(nil, uint64(ids[len(ids)-1])))
	}
	writeJSON(w, http.StatusOK, resp)
}

// openLeasePage returns the last ID of the page before, which a page
// token of the lease list holds.
func (h *Handler) openLeasePage(q *wire.Query, token string) int64 {
	payload, err := h.tokens.Open(wire.TokenLeases, token)
	after, n := binary.Uvarint(payload)
	if err != nil || n <= 0 || n != len(payload) || after < 1 || after > maxLeaseID {
		q.Failf("page_token is %v", wire.ErrBadToken)
		return 0
	}
	return int64(after)
}

// leaseTimeToLiveParams are the query parameters of GET /v1/leases/{id}.
var leaseTimeToLiveParams = wire.Params{"keys"}

// leaseTimeToLive serves GET /v1/leases/{id}. With keys=true it lists the
// attached keys the caller may read, and only those, and says when it
// left some out (keys_hidden): etcd refuses the whole answer instead
// (permission denied), which would hide a lease's readable keys too from
// who may read only some of them.
//
//	@Summary		A lease's time to live
//	@Description	Reports the seconds left before the lease expires and its granted TTL; with keys=true also the attached keys the caller may read, in keys, or, when any is not valid UTF-8, all of them in keys_base64, and keys_hidden true when the lease holds keys the caller may not read, left out.
//	@Tags			leases
//	@ID				leaseTimeToLive
//	@Produce		json
//	@Param			id		path		integer				true	"The lease ID."	minimum(1)	maximum(9007199254740991)	format(int64)
//	@Param			keys	query		boolean				false	"List the attached keys."
//	@Success		200		{object}	wire.LeaseTimeToLive	"The lease."
//	@Failure		400		{object}	wire.ErrorResponse			"invalid_argument: an ID out of [1, 2^53-1], a bad parameter, or keys=true for a lease whose keys would pass --max-response-bytes (max_response_bytes names it)."
//	@Failure		401	{object}	wire.ErrorResponse	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		404		{object}	wire.ErrorResponse			"lease_not_found."
//	@Failure		429	{object}	wire.ErrorResponse	"too_many_requests: the answers over 64 KiB being built and sent at once would pass --max-held-answer-bytes; retry later (Retry-After)."
//	@Failure		500	{object}	wire.ErrorResponse	"internal: an unexpected failure."
//	@Failure		503	{object}	wire.ErrorResponse	"unavailable: the server is shutting down, its backend failed, or it serves no leases."
//	@Header			200,201	{integer}	X-Revision	"The store's revision when the request was served."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/leases/{id} [get]
func (h *Handler) leaseTimeToLive(w http.ResponseWriter, r *http.Request) {
	id, ok := h.leaseID(w, r)
	if !ok {
		return
	}
	q := newQuery(r, leaseTimeToLiveParams)
	withKeys := q.Bool("keys")
	if q.Err() != nil {
		h.writeError(w, r, q.Err())
		return
	}
	if !h.authorize(w, r, Access{}) {
		return
	}
	var st kv.LeaseStatus
	var err error
	if withKeys {
		// The keys count against the answer's bounds as they are copied.
		st, err = h.cfg.Backend.LeaseKeys(r.Context(), id, h.readLimits(w))
	} else {
		st, err = h.cfg.Backend.TimeToLive(r.Context(), id, false)
	}
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	resp := map[string]any{"header": h.header(w), "id": st.ID, "ttl": st.TTL, "granted_ttl": st.GrantedTTL}
	if withKeys {
		var readable [][]byte
		for _, k := range st.Keys {
			if h.cfg.Authorizer.Authorize(r, Access{Read: []keyrange.Range{{Key: k}}}) == nil {
				readable = append(readable, k)
			}
		}
		// keyList's results are typed slices: compare them, not the
		// interfaces holding them, with nil.
		if strs, b64 := keyList(readable); b64 != nil {
			resp["keys_base64"] = b64
		} else {
			resp["keys"] = strs
		}
		if len(readable) < len(st.Keys) {
			resp["keys_hidden"] = true
		}
	}
	writeJSON(w, http.StatusOK, resp)
}

// keyList returns keys as strings, or, if any is not valid UTF-8, all of
// them as base64 (a list is never split between the two forms).
func keyList(keys [][]byte) (strs []string, b64 [][]byte) {
	strs = make([]string, 0, len(keys))
	for _, k := range keys {
		if !utf8.Valid(k) {
			return nil, keys
		}
		strs = append(strs, string(k))
	}
	return strs, nil
}

// keepAliveLease serves POST /v1/leases/{id}/keepalive.
//
//	@Summary		Keep a lease alive
//	@Description	Renews the lease to its full TTL.
//	@Tags			leases
//	@ID				keepAliveLease
//	@Produce		json
//	@Param			id	path		integer				true	"The lease ID."	minimum(1)	maximum(9007199254740991)	format(int64)
//	@Success		200	{object}	wire.LeaseResponse	"Renewed: ttl is the full TTL again."
//	@Failure		400	{object}	wire.ErrorResponse			"invalid_argument: an ID out of [1, 2^53-1]."
//	@Failure		401	{object}	wire.ErrorResponse	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		404	{object}	wire.ErrorResponse			"lease_not_found."
//	@Failure		500	{object}	wire.ErrorResponse	"internal: an unexpected failure."
//	@Failure		503	{object}	wire.ErrorResponse	"unavailable: the server is shutting down, its backend failed, or it serves no leases."
//	@Header			200,201	{integer}	X-Revision	"The store's revision when the request was served."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/leases/{id}/keepalive [post]
func (h *Handler) keepAliveLease(w http.ResponseWriter, r *http.Request) {
	id, ok := h.leaseID(w, r)
	if !ok || !h.authorize(w, r, Access{}) {
		return
	}
	ttl, err := h.cfg.Backend.KeepAlive(r.Context(), id)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.LeaseResponse{Header: h.header(w), ID: id, TTL: ttl})
}

// revokeLease serves DELETE /v1/leases/{id}: the caller needs write access
// to every key attached.
//
//	@Summary		Revoke a lease
//	@Description	Revokes the lease and deletes its keys, in one revision.
//	@Tags			leases
//	@ID				revokeLease
//	@Produce		json
//	@Param			id	path		integer				true	"The lease ID."	minimum(1)	maximum(9007199254740991)	format(int64)
//	@Success		200	{object}	wire.HeaderResponse	"Revoked; the header's revision is the revoke's."
//	@Failure		400	{object}	wire.ErrorResponse			"invalid_argument: an ID out of [1, 2^53-1]."
//	@Failure		401	{object}	wire.ErrorResponse	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403	{object}	wire.ErrorResponse			"permission_denied: the caller may not write every attached key."
//	@Failure		404	{object}	wire.ErrorResponse			"lease_not_found."
//	@Failure		500	{object}	wire.ErrorResponse	"internal: an unexpected failure."
//	@Failure		503	{object}	wire.ErrorResponse	"unavailable: the server is shutting down, its backend failed, or it serves no leases."
//	@Header			200,201	{integer}	X-Revision	"The store's revision when the request was served."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/leases/{id} [delete]
func (h *Handler) revokeLease(w http.ResponseWriter, r *http.Request) {
	id, ok := h.leaseID(w, r)
	if !ok {
		return
	}
	// Authenticate first, so that who may not know does not learn whether
	// the lease exists; then the caller needs write access to every key
	// the revoke deletes.
	if !h.authorize(w, r, Access{}) {
		return
	}
	rev, err := h.cfg.Backend.Revoke(r.Context(), id, h.leaseGuard(r))
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	setRevision(w, rev)
	writeJSON(w, http.StatusOK, wire.HeaderResponse{Header: wire.ResponseHeader{Revision: rev}})
}

var _ json.Marshaler = jsonKV{}
