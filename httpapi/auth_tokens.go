package httpapi

import (
	"net"
	"net/http"

	"github.com/httpkv/httpkv/wire"
)

// authStatus serves GET /v1/auth/status; it needs no token.
//
//	@Summary		Whether auth is enabled
//	@Description	Reports whether auth is enabled. It needs no token.
//	@Tags			auth
//	@ID				authStatus
//	@Produce		json
//	@Success		200	{object}	wire.AuthStatus	"Whether auth is enabled."
//	@Failure		500	{object}	wire.ErrorResponse	"internal: an unexpected failure."
//	@Failure		503	{object}	wire.ErrorResponse	"unavailable: the server serves no auth, or is shutting down."
//	@Router			/v1/auth/status [get]
func (h *Handler) authStatus(w http.ResponseWriter, r *http.Request) {
	a := h.authStore(w)
	if a == nil {
		return
	}
	writeJSON(w, http.StatusOK, wire.AuthStatus{Enabled: a.Enabled()})
}

// authEnable serves POST /v1/auth/enable.
//
//	@Summary		Enable auth
//	@Description	Enables auth: from then on every /v1 call but POST /v1/auth/token and GET /v1/auth/status needs a token. It needs a root user with the root role.
//	@Tags			auth
//	@ID				authEnable
//	@Produce		json
//	@Success		200	{object}	wire.AuthStatus	"Enabled."
//	@Failure		400	{object}	wire.ErrorResponse	"invalid_argument: there is no root user with the root role."
//	@Failure		401	{object}	wire.ErrorResponse	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403	{object}	wire.ErrorResponse	"permission_denied: only the root role may."
//	@Failure		500	{object}	wire.ErrorResponse	"internal: an unexpected failure."
//	@Failure		503	{object}	wire.ErrorResponse	"unavailable: the server serves no auth, or is shutting down."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/auth/enable [post]
func (h *Handler) authEnable(w http.ResponseWriter, r *http.Request) { h.setAuth(w, r, true) }

// authDisable serves POST /v1/auth/disable.
//
//	@Summary		Disable auth
//	@Description	Disables auth: no call needs a token any more.
//	@Tags			auth
//	@ID				authDisable
//	@Produce		json
//	@Success		200	{object}	wire.AuthStatus	"Disabled."
//	@Failure		401	{object}	wire.ErrorResponse	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403	{object}	wire.ErrorResponse	"permission_denied: only the root role may."
//	@Failure		500	{object}	wire.ErrorResponse	"internal: an unexpected failure."
//	@Failure		503	{object}	wire.ErrorResponse	"unavailable: the server serves no auth, or is shutting down."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/auth/disable [post]
func (h *Handler) authDisable(w http.ResponseWriter, r *http.Request) { h.setAuth(w, r, false) }

func (h *Handler) setAuth(w http.ResponseWriter, r *http.Request, on bool) {
	a := h.authStore(w)
	if a == nil || !h.authorize(w, r, Access{Admin: true}) {
		return
	}
	if err := a.SetEnabled(on); err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.AuthStatus{Enabled: on})
}

// authToken serves POST /v1/auth/token; it needs no token.
//
//	@Summary		Get a token
//	@Description	Trades a user's name and password for a token that expires after --auth-token-ttl. It needs no token. Failures are limited per user and client address (5, then one every 2 seconds) and per client address across users (20, then one a second); past either, requests answer 429 for a while. The right password from another address still works.
//	@Tags			auth
//	@ID				authToken
//	@Accept			json
//	@Produce		json
//	@Param			credentials	body	wire.Credentials	true	"The user's name and password."
//	@Success		200	{object}	wire.Token	"The token."
//	@Failure		400	{object}	wire.ErrorResponse	"invalid_argument: malformed JSON, a bad field, or a name or password no user can have (empty, too long, not UTF-8)."
//	@Failure		401	{object}	wire.ErrorResponse	"unauthenticated: a bad name or password."
//	@Failure		413	{object}	wire.ErrorResponse	"request_too_large: the body is over the server's --max-request-bytes."
//	@Failure		429	{object}	wire.ErrorResponse	"too_many_requests: too many failed attempts, or more request bytes in flight than --max-inflight-request-bytes allows; try again later."
//	@Failure		500	{object}	wire.ErrorResponse	"internal: an unexpected failure."
//	@Failure		503	{object}	wire.ErrorResponse	"unavailable: the server serves no auth, or is shutting down."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Router			/v1/auth/token [post]
func (h *Handler) authToken(w http.ResponseWriter, r *http.Request) {
	a := h.authStore(w)
	if a == nil {
		return
	}
	var req wire.Credentials
	if err := decodeJSON(r, &req); err != nil {
		h.writeError(w, r, err)
		return
	}
	addr, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		addr = r.RemoteAddr
	}
	tok, ttl, err := a.Authenticate(req.Name, req.Password, addr)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, wire.Token{Token: tok, TTL: int64(ttl.Seconds())})
}
