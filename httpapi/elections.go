package httpapi

import (
	"bytes"
	"context"
	"net/http"

	"github.com/httpkv/httpkv/concurrency"

	"github.com/httpkv/httpkv/wire"
)

// leaderJSON is a LeaderKey on the wire.
type leaderJSON struct {
	Name       *string `json:"name"`
	NameBase64 *string `json:"name_base64"`
	Key        *string `json:"key"`
	KeyBase64  *string `json:"key_base64"`
	Revision   int64   `json:"revision"`
	Lease      int64   `json:"lease"`
}

// leaderKey reads a leader given for the election called name.
func (l *leaderJSON) leaderKey(name []byte) (concurrency.LeaderKey, error) {
	if l == nil {
		return concurrency.LeaderKey{}, badRequest("leader (as campaign answered it) is required")
	}
	given, set, err := wire.Twin("leader.name", l.Name, l.NameBase64)
	if err != nil {
		return concurrency.LeaderKey{}, err
	}
	if set && !bytes.Equal(given, name) {
		return concurrency.LeaderKey{}, badRequest("leader.name %q is not the election in the path, %q", given, name)
	}
	key, err := wire.RequireKey("leader.key", l.Key, l.KeyBase64)
	if err != nil {
		return concurrency.LeaderKey{}, err
	}
	if aerr := checkLeaseID("leader.lease", l.Lease); aerr != nil {
		return concurrency.LeaderKey{}, aerr
	}
	return concurrency.LeaderKey{Name: name, Key: key, Revision: l.Revision, Lease: l.Lease}, nil
}

// appendLeader appends `,"leader":{...}`.
func appendLeader(b []byte, l concurrency.LeaderKey) []byte {
	b = append(b, `,"leader":{`...)
	b = wire.AppendBytesField(b, "name", l.Name, true)
	b = wire.AppendBytesField(b, "key", l.Key, false)
	b = wire.AppendIntField(b, "revision", l.Revision)
	b = wire.AppendIntField(b, "lease", l.Lease)
	return append(b, '}')
}

// campaign serves POST /v1/elections/{name}/campaign.
//
//	@Summary		Campaign for leader
//	@Description	Waits until the lease leads the election called name, as etcd's v3election: the lease's key name/<lease ID in lowercase hex> is put under the prefix name/ with value, attached to the lease, and the candidate leads once no older key is left there (FIFO by create revision). A candidate whose lease expires or is revoked drops out, and the next one leads. A lease that is a candidate already keeps its place, with value proclaimed.
//	@Description	If the candidate does not lead within timeout, or the client leaves, its key is deleted again.
//	@Tags			elections
//	@ID				electionCampaign
//	@Accept			json
//	@Produce		json
//	@Param			name		path		string					true	"The election's name, one path segment, percent-decoded (a slash in it is %2F). Not empty."
//	@Param			timeout		query		string					false	"How long to wait, a Go duration from 0s (try once) to 5m; 30s when absent."	example(10s)
//	@Param			campaign	body		wire.CampaignRequest		true	"The candidate's lease and value."
//	@Success		200			{object}	wire.CampaignResponse		"Leading; leader is what proclaim and resign take."
//	@Failure		400			{object}	wire.ErrorResponse				"invalid_argument: malformed JSON, an empty name, a lease ID out of range, a bad timeout."
//	@Failure		401			{object}	wire.ErrorResponse				"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403			{object}	wire.ErrorResponse				"permission_denied: the caller may not write every key with the prefix name/."
//	@Failure		404			{object}	wire.ErrorResponse				"lease_not_found: the lease does not exist, or it ended while waiting; key_not_found: the candidate's key was deleted by someone else."
//	@Failure		408			{object}	wire.ErrorResponse				"lock_timeout: not leading within timeout; the candidate's key was removed."
//	@Failure		413			{object}	wire.ErrorResponse				"request_too_large: the body is over the server's --max-request-bytes."
//	@Failure		500			{object}	wire.ErrorResponse				"internal: an unexpected failure."
//	@Failure		503			{object}	wire.ErrorResponse				"unavailable: the server is shutting down or its backend failed."
//	@Failure		507			{object}	wire.ErrorResponse				"no_space: the backend quota is exceeded (NOSPACE alarm)."
//	@Header			200			{integer}	X-Revision				"The revision at which the candidate was seen leading."
//	@Header			401			{string}	WWW-Authenticate		"Bearer"
//	@Security		BearerAuth
//	@Security		AccessToken
//	@Router			/v1/elections/{name}/campaign [post]
func (h *Handler) campaign(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Lease       int64   `json:"lease"`
		Value       *string `json:"value"`
		ValueBase64 *string `json:"value_base64"`
	}
	b, name, timeout, ok := h.waitRequest(w, r, "/v1/elections/", "/campaign", &req, &req.Lease)
	if !ok {
		return
	}
	value, _, err := wire.Twin("value", req.Value, req.ValueBase64)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	ctx, cancel := h.waitContext(r)
	defer cancel()
	l, rev, err := concurrency.Campaign(ctx, b, name, req.Lease, value, timeout)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	setRevision(w, rev)
	writeRawJSON(w, http.StatusOK, append(appendLeader(wire.AppendHeader(nil, rev), l), '}', '\n'))
}

// proclaim serves POST /v1/elections/{name}/proclaim.
//
//	@Summary		Proclaim a new value
//	@Description	Sets the value of the leader's key, as etcd's v3election, but only by the leader: while that key is the oldest under the prefix name/ and still exists as campaign created it (same create revision, same lease); observers see the new value. A candidate that still waits is refused, so that observers see its campaign value when it leads.
//	@Tags			elections
//	@ID				electionProclaim
//	@Accept			json
//	@Produce		json
//	@Param			name		path		string				true	"The election's name, one path segment, percent-decoded (a slash in it is %2F). Not empty."
//	@Param			proclaim	body		wire.ProclaimRequest	true	"The leader, as campaign answered it, and the new value."
//	@Success		200			{object}	wire.HeaderResponse	"Proclaimed; the header's revision is the put's."
//	@Failure		400			{object}	wire.ErrorResponse			"invalid_argument: malformed JSON, an empty name, a leader missing or not of this election."
//	@Failure		401			{object}	wire.ErrorResponse			"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403			{object}	wire.ErrorResponse			"permission_denied: the caller may not write every key with the prefix name/."
//	@Failure		412			{object}	wire.ErrorResponse			"not_leader: the candidate does not lead: it still waits, or its key no longer exists as campaign created it (resigned, or its lease ended); nothing changed."
//	@Failure		413			{object}	wire.ErrorResponse			"request_too_large: the body is over the server's --max-request-bytes."
//	@Failure		500			{object}	wire.ErrorResponse			"internal: an unexpected failure."
//	@Failure		503			{object}	wire.ErrorResponse			"unavailable: the server is shutting down or its backend failed."
//	@Failure		507			{object}	wire.ErrorResponse			"no_space: the backend quota is exceeded (NOSPACE alarm)."
//	@Header			200			{integer}	X-Revision			"The header's revision."
//	@Header			401			{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Security		AccessToken
//	@Router			/v1/elections/{name}/proclaim [post]
func (h *Handler) proclaim(w http.ResponseWriter, r *http.Request) {
	var req proclaimRequest
	h.changeLeadership(w, r, "proclaim", &req, func(ctx context.Context, b concurrency.Backend, l concurrency.LeaderKey) (int64, error) {
		value, _, err := wire.Twin("value", req.Value, req.ValueBase64)
		if err != nil {
			return 0, err
		}
		return concurrency.Proclaim(ctx, b, l, value)
	})
}

type proclaimRequest struct {
	Leader      *leaderJSON `json:"leader"`
	Value       *string     `json:"value"`
	ValueBase64 *string     `json:"value_base64"`
}

func (p *proclaimRequest) leader() *leaderJSON { return p.Leader }

type resignRequest struct {
	Leader *leaderJSON `json:"leader"`
}

func (p *resignRequest) leader() *leaderJSON { return p.Leader }

// changeLeadership serves proclaim and resign: it reads req, a body that
// names a leader, and runs do for that leader.
func (h *Handler) changeLeadership(w http.ResponseWriter, r *http.Request, action string, req interface{ leader() *leaderJSON },
	do func(context.Context, concurrency.Backend, concurrency.LeaderKey) (int64, error)) {
	b, name, ok := h.nameRequest(w, r, "/v1/elections/", "/"+action, req, true)
	if !ok {
		return
	}
	l, err := req.leader().leaderKey(name)
	var rev int64
	if err == nil {
		rev, err = do(r.Context(), b, l)
	}
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.writeHeaderOnly(w, rev)
}

// resign serves POST /v1/elections/{name}/resign.
//
//	@Summary		Resign
//	@Description	Deletes the leader's key, only by the leader: while that key is the oldest under the prefix name/ and still exists as campaign created it (same create revision, same lease); the next candidate, if any, then leads. A candidate that still waits is refused (it leaves by ending its campaign request, or its lease).
//	@Tags			elections
//	@ID				electionResign
//	@Accept			json
//	@Produce		json
//	@Param			name	path		string				true	"The election's name, one path segment, percent-decoded (a slash in it is %2F). Not empty."
//	@Param			resign	body		wire.ResignRequest	true	"The leader, as campaign answered it."
//	@Success		200		{object}	wire.HeaderResponse	"Resigned; the header's revision is the delete's."
//	@Failure		400		{object}	wire.ErrorResponse			"invalid_argument: malformed JSON, an empty name, a leader missing or not of this election."
//	@Failure		401		{object}	wire.ErrorResponse			"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403		{object}	wire.ErrorResponse			"permission_denied: the caller may not write every key with the prefix name/."
//	@Failure		412		{object}	wire.ErrorResponse			"not_leader: the candidate does not lead: it still waits, or its key no longer exists as campaign created it (resigned already, or its lease ended); nothing changed."
//	@Failure		413		{object}	wire.ErrorResponse			"request_too_large: the body is over the server's --max-request-bytes."
//	@Failure		500		{object}	wire.ErrorResponse			"internal: an unexpected failure."
//	@Failure		503		{object}	wire.ErrorResponse			"unavailable: the server is shutting down or its backend failed."
//	@Header			200		{integer}	X-Revision			"The header's revision."
//	@Header			401		{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Security		AccessToken
//	@Router			/v1/elections/{name}/resign [post]
func (h *Handler) resign(w http.ResponseWriter, r *http.Request) {
	h.changeLeadership(w, r, "resign", &resignRequest{}, concurrency.Resign)
}

// leader serves GET /v1/elections/{name}/leader.
//
//	@Summary		The current leader
//	@Description	Reads the leader of the election called name: the key with the lowest create revision under the prefix name/, with the value it proclaimed.
//	@Tags			elections
//	@ID				electionLeader
//	@Produce		json
//	@Param			name	path		string			true	"The election's name, one path segment, percent-decoded (a slash in it is %2F). Not empty."
//	@Success		200		{object}	wire.GetResponse	"The leader's key."
//	@Failure		400		{object}	wire.ErrorResponse		"invalid_argument: an empty name."
//	@Failure		401		{object}	wire.ErrorResponse		"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403		{object}	wire.ErrorResponse		"permission_denied: the caller may not read every key with the prefix name/."
//	@Failure		404		{object}	wire.ErrorResponse		"no_leader: the election has no candidate."
//	@Failure		429		{object}	wire.ErrorResponse		"too_many_requests: the answers over 64 KiB being built and sent at once would pass --max-held-answer-bytes; retry later (Retry-After)."
//	@Failure		500		{object}	wire.ErrorResponse		"internal: an unexpected failure."
//	@Failure		503		{object}	wire.ErrorResponse		"unavailable: the server is shutting down or its backend failed."
//	@Header			200		{integer}	X-Revision		"The revision read."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Security		AccessToken
//	@Router			/v1/elections/{name}/leader [get]
func (h *Handler) leader(w http.ResponseWriter, r *http.Request) {
	b, name, ok := h.nameRequest(w, r, "/v1/elections/", "/leader", nil, false)
	if !ok {
		return
	}
	leader, rev, err := concurrency.Leader(r.Context(), b, name)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	setRevision(w, rev)
	body := append(wire.AppendHeader(nil, rev), `,"kv":`...)
	writeRawJSON(w, http.StatusOK, append(wire.AppendKV(body, &leader, true), '}', '\n'))
}
