package httpapi

import (
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/httpkv/httpkv/auth"
	"github.com/httpkv/httpkv/kv"
)

// authAuthorizer checks requests against an auth.Store: with auth enabled,
// a valid token, and permissions covering every key the request touches.
type authAuthorizer struct {
	a *auth.Store
}

// errQueryToken: a token in the query string of a request that must send
// it in its Authorization header.
var errQueryToken = kv.Errorf(auth.ErrUnauthenticated, "access_token in the query is accepted only by the streams a browser's EventSource opens (GET /v1/watch), which cannot set headers: send \"Authorization: Bearer <token>\"")

// requestToken returns the bearer token of r: the Authorization header,
// or, on a stream a browser opens with EventSource (which cannot set
// headers), the access_token query parameter. Elsewhere a token in the
// query is refused: URLs end up in logs, histories and Referer headers.
func requestToken(r *http.Request) (string, error) {
	if h := r.Header.Get("Authorization"); h != "" {
		if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
			return strings.TrimSpace(h[7:]), nil
		}
		return "", nil
	}
	q := r.URL.Query()
	if !q.Has("access_token") {
		return "", nil
	}
	if !queryTokenAllowed(r) {
		return "", errQueryToken
	}
	return q.Get("access_token"), nil
}

// queryTokenAllowed reports whether r is a stream a browser opens with
// EventSource: a watch, the stream of a multi-watch stream, or the observe
// stream of an election. (Paths the router does not have answer 404.)
func queryTokenAllowed(r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	p := r.URL.Path
	switch {
	case p == "/v1/watch":
		return true
	case strings.HasPrefix(p, "/v1/watch/streams/"):
		return !strings.Contains(strings.TrimPrefix(p, "/v1/watch/streams/"), "/")
	case strings.HasPrefix(p, "/v1/elections/"):
		return strings.HasSuffix(p, "/observe")
	}
	return false
}

// user returns the user r acts as.
func (x authAuthorizer) user(r *http.Request) (string, error) {
	token, err := requestToken(r)
	if err != nil {
		return "", err
	}
	return x.a.UserOf(token)
}

// Authenticate checks that r carries a valid token, while auth is on.
func (x authAuthorizer) Authenticate(r *http.Request) error {
	_, err := x.Identify(r)
	return err
}

func (x authAuthorizer) Authorize(r *http.Request, a Access) error {
	if !x.a.Enabled() {
		return nil
	}
	user, err := x.user(r)
	if err != nil {
		return err
	}
	return x.check(user, a)
}

// Unrestricted reports whether r may do anything: auth is disabled, or
// r carries a valid token of a root user.
func (x authAuthorizer) Unrestricted(r *http.Request) bool {
	if !x.a.Enabled() {
		return true
	}
	user, err := x.user(r)
	return err == nil && x.a.Permissions(user).Root()
}

// Identify returns who r acts as: no one while auth is disabled, else its
// token's user, the token, and when it expires.
func (x authAuthorizer) Identify(r *http.Request) (streamCaller, error) {
	if !x.a.Enabled() {
		return streamCaller{}, nil
	}
	tok, err := requestToken(r)
	if err != nil {
		return streamCaller{}, err
	}
	user, left, err := x.a.Session(tok)
	if err != nil {
		return streamCaller{}, err
	}
	return streamCaller{user: user, token: tok, expires: time.Now().Add(left)}, nil
}

// Recheck decides a for the caller of a stream as things stand now: its
// token must still be good, and still its user's, and the user must
// still be allowed a. A stream opened without a token ends once auth is
// enabled, and one opened with a token ends once auth is disabled (the
// token is gone with it). The error says why.
func (x authAuthorizer) Recheck(c streamCaller, a Access) error {
	if !x.a.Enabled() {
		if c.token != "" {
			return errAuthDisabled
		}
		return nil
	}
	if c.token == "" {
		return errAuthEnabled
	}
	if _, err := x.a.GetUser(c.user); err != nil {
		return errUserDeleted
	}
	if user, _, err := x.a.Session(c.token); err != nil || user != c.user {
		if !time.Now().Before(c.expires) {
			return errTokenExpired
		}
		return errTokenRevoked // a password change, or a restart of auth
	}
	return x.check(c.user, a)
}

// check decides a for an authenticated user.
func (x authAuthorizer) check(user string, a Access) error {
	p := x.a.Permissions(user)
	if p.Root() {
		return nil
	}
	if a.Admin {
		return auth.ErrPermissionDenied
	}
	for _, kr := range a.Read {
		if !p.Allowed(auth.Read, kr.Key, kr.End) {
			return auth.ErrPermissionDenied
		}
	}
	for _, kr := range a.Write {
		if !p.Allowed(auth.Write, kr.Key, kr.End) {
			return auth.ErrPermissionDenied
		}
	}
	return nil
}

// Changed lets watch streams check again when users or roles change.
func (x authAuthorizer) Changed() <-chan struct{} { return x.a.Changed() }

func (h *Handler) authStore(w http.ResponseWriter) *auth.Store {
	if h.cfg.Auth == nil {
		answerError(w, errorf(kv.CodeUnavailable, "auth is not served"))
	}
	return h.cfg.Auth
}

// authStatus serves GET /v1/auth/status; it needs no token.
//
//	@Summary		Whether auth is enabled
//	@Description	Reports whether auth is enabled. It needs no token.
//	@Tags			auth
//	@ID				authStatus
//	@Produce		json
//	@Success		200	{object}	authStatusDoc	"Whether auth is enabled."
//	@Failure		500	{object}	errorDoc	"internal: an unexpected failure."
//	@Failure		503	{object}	errorDoc	"unavailable: the server serves no auth, or is shutting down."
//	@Router			/v1/auth/status [get]
func (h *Handler) authStatus(w http.ResponseWriter, r *http.Request) {
	a := h.authStore(w)
	if a == nil {
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"enabled": a.Enabled()})
}

// authEnable serves POST /v1/auth/enable.
//
//	@Summary		Enable auth
//	@Description	Enables auth: from then on every /v1 call but POST /v1/auth/token and GET /v1/auth/status needs a token. It needs a root user with the root role.
//	@Tags			auth
//	@ID				authEnable
//	@Produce		json
//	@Success		200	{object}	authStatusDoc	"Enabled."
//	@Failure		400	{object}	errorDoc	"invalid_argument: there is no root user with the root role."
//	@Failure		401	{object}	errorDoc	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403	{object}	errorDoc	"permission_denied: only the root role may."
//	@Failure		500	{object}	errorDoc	"internal: an unexpected failure."
//	@Failure		503	{object}	errorDoc	"unavailable: the server serves no auth, or is shutting down."
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
//	@Success		200	{object}	authStatusDoc	"Disabled."
//	@Failure		401	{object}	errorDoc	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403	{object}	errorDoc	"permission_denied: only the root role may."
//	@Failure		500	{object}	errorDoc	"internal: an unexpected failure."
//	@Failure		503	{object}	errorDoc	"unavailable: the server serves no auth, or is shutting down."
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
	writeJSON(w, http.StatusOK, map[string]bool{"enabled": on})
}

// authToken serves POST /v1/auth/token; it needs no token.
//
//	@Summary		Get a token
//	@Description	Trades a user's name and password for a token that expires after --auth-token-ttl. It needs no token. Failures are limited per user and client address (5, then one every 2 seconds) and per client address across users (20, then one a second); past either, requests answer 429 for a while. The right password from another address still works.
//	@Tags			auth
//	@ID				authToken
//	@Accept			json
//	@Produce		json
//	@Param			credentials	body	credentialsDoc	true	"The user's name and password."
//	@Success		200	{object}	tokenDoc	"The token."
//	@Failure		400	{object}	errorDoc	"invalid_argument: malformed JSON, a bad field, or a name or password no user can have (empty, too long, not UTF-8)."
//	@Failure		401	{object}	errorDoc	"unauthenticated: a bad name or password."
//	@Failure		413	{object}	errorDoc	"request_too_large: the body is over the server's --max-request-bytes."
//	@Failure		429	{object}	errorDoc	"too_many_requests: too many failed attempts, or more request bytes in flight than --max-inflight-request-bytes allows; try again later."
//	@Failure		500	{object}	errorDoc	"internal: an unexpected failure."
//	@Failure		503	{object}	errorDoc	"unavailable: the server serves no auth, or is shutting down."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Router			/v1/auth/token [post]
func (h *Handler) authToken(w http.ResponseWriter, r *http.Request) {
	a := h.authStore(w)
	if a == nil {
		return
	}
	var req struct {
		Name     string `json:"name"`
		Password string `json:"password"`
	}
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
	writeJSON(w, http.StatusOK, map[string]any{"token": tok, "ttl": int64(ttl.Seconds())})
}

// admin answers the request unless auth is served and the caller is root
// (or auth is disabled).
func (h *Handler) admin(w http.ResponseWriter, r *http.Request) *auth.Store {
	a := h.authStore(w)
	if a == nil || !h.authorize(w, r, Access{Admin: true}) {
		return nil
	}
	return a
}

type userJSON struct {
	Name  string   `json:"name"`
	Roles []string `json:"roles"`
}

// listUsers serves GET /v1/auth/users.
//
//	@Summary		List users
//	@Description	Lists every user's name, sorted.
//	@Tags			auth
//	@ID				listUsers
//	@Produce		json
//	@Success		200	{object}	userListDoc	"The users."
//	@Failure		401	{object}	errorDoc	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403	{object}	errorDoc	"permission_denied: only the root role may."
//	@Failure		500	{object}	errorDoc	"internal: an unexpected failure."
//	@Failure		503	{object}	errorDoc	"unavailable: the server serves no auth, or is shutting down."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/auth/users [get]
func (h *Handler) listUsers(w http.ResponseWriter, r *http.Request) {
	if a := h.admin(w, r); a != nil {
		writeJSON(w, http.StatusOK, map[string][]string{"users": a.Users()})
	}
}

// addUser serves POST /v1/auth/users.
//
//	@Summary		Add a user
//	@Description	Adds a user with no roles.
//	@Tags			auth
//	@ID				addUser
//	@Accept			json
//	@Produce		json
//	@Param			user	body	credentialsDoc	true	"The new user's name and password."
//	@Success		201	{object}	userDoc	"Added."
//	@Failure		400	{object}	errorDoc	"invalid_argument: malformed JSON, an empty name or password."
//	@Failure		401	{object}	errorDoc	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403	{object}	errorDoc	"permission_denied: only the root role may."
//	@Failure		409	{object}	errorDoc	"already_exists: a user with that name exists."
//	@Failure		413	{object}	errorDoc	"request_too_large: the body is over the server's --max-request-bytes."
//	@Failure		429	{object}	errorDoc	"too_many_requests: more request bytes are in flight than --max-inflight-request-bytes allows; retry later (Retry-After)."
//	@Failure		500	{object}	errorDoc	"internal: an unexpected failure."
//	@Failure		503	{object}	errorDoc	"unavailable: the server serves no auth, or is shutting down."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/auth/users [post]
func (h *Handler) addUser(w http.ResponseWriter, r *http.Request) {
	a := h.admin(w, r)
	if a == nil {
		return
	}
	var req struct {
		Name     string `json:"name"`
		Password string `json:"password"`
	}
	if err := decodeJSON(r, &req); err != nil {
		h.writeError(w, r, err)
		return
	}
	if err := a.AddUser(req.Name, req.Password); err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, userJSON{Name: req.Name, Roles: []string{}})
}

// getUser serves GET /v1/auth/users/{name}.
//
//	@Summary		Get a user
//	@Description	A user and the roles granted to it.
//	@Tags			auth
//	@ID				getUser
//	@Produce		json
//	@Param			name	path	string	true	"The user's name."
//	@Success		200	{object}	userDoc	"The user."
//	@Failure		401	{object}	errorDoc	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403	{object}	errorDoc	"permission_denied: only the root role may."
//	@Failure		404	{object}	errorDoc	"user_not_found."
//	@Failure		500	{object}	errorDoc	"internal: an unexpected failure."
//	@Failure		503	{object}	errorDoc	"unavailable: the server serves no auth, or is shutting down."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/auth/users/{name} [get]
func (h *Handler) getUser(w http.ResponseWriter, r *http.Request) {
	a := h.admin(w, r)
	if a == nil {
		return
	}
	u, err := a.GetUser(chi.URLParam(r, "name"))
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if u.Roles == nil {
		u.Roles = []string{}
	}
	writeJSON(w, http.StatusOK, userJSON{Name: u.Name, Roles: u.Roles})
}

// deleteUser serves DELETE /v1/auth/users/{name}.
//
//	@Summary		Delete a user
//	@Description	Deletes a user; its tokens stop working.
//	@Tags			auth
//	@ID				deleteUser
//	@Produce		json
//	@Param			name	path	string	true	"The user's name."
//	@Success		200	{object}	emptyDoc	"Deleted."
//	@Failure		400	{object}	errorDoc	"invalid_argument: the change would leave auth enabled without a root user."
//	@Failure		401	{object}	errorDoc	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403	{object}	errorDoc	"permission_denied: only the root role may."
//	@Failure		404	{object}	errorDoc	"user_not_found."
//	@Failure		500	{object}	errorDoc	"internal: an unexpected failure."
//	@Failure		503	{object}	errorDoc	"unavailable: the server serves no auth, or is shutting down."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/auth/users/{name} [delete]
func (h *Handler) deleteUser(w http.ResponseWriter, r *http.Request) {
	h.adminChange(w, r, func(a *auth.Store) error { return a.DeleteUser(chi.URLParam(r, "name")) })
}

// changePassword serves PUT /v1/auth/users/{name}/password.
//
//	@Summary		Change a user's password
//	@Description	Sets a user's password.
//	@Tags			auth
//	@ID				changePassword
//	@Accept			json
//	@Produce		json
//	@Param			name	path	string	true	"The user's name."
//	@Param			password	body	passwordDoc	true	"The new password."
//	@Success		200	{object}	emptyDoc	"Changed."
//	@Failure		400	{object}	errorDoc	"invalid_argument: malformed JSON or an empty password."
//	@Failure		401	{object}	errorDoc	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403	{object}	errorDoc	"permission_denied: only the root role may."
//	@Failure		404	{object}	errorDoc	"user_not_found."
//	@Failure		413	{object}	errorDoc	"request_too_large: the body is over the server's --max-request-bytes."
//	@Failure		429	{object}	errorDoc	"too_many_requests: more request bytes are in flight than --max-inflight-request-bytes allows; retry later (Retry-After)."
//	@Failure		500	{object}	errorDoc	"internal: an unexpected failure."
//	@Failure		503	{object}	errorDoc	"unavailable: the server serves no auth, or is shutting down."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/auth/users/{name}/password [put]
func (h *Handler) changePassword(w http.ResponseWriter, r *http.Request) {
	a := h.admin(w, r)
	if a == nil {
		return
	}
	var req struct {
		Password string `json:"password"`
	}
	if err := decodeJSON(r, &req); err != nil {
		h.writeError(w, r, err)
		return
	}
	if err := a.ChangePassword(chi.URLParam(r, "name"), req.Password); err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// grantRole serves PUT /v1/auth/users/{name}/roles/{role}.
//
//	@Summary		Grant a role to a user
//	@Description	Grants the role to the user.
//	@Tags			auth
//	@ID				grantRole
//	@Produce		json
//	@Param			name	path	string	true	"The user's name."
//	@Param			role	path	string	true	"The role's name."
//	@Success		200	{object}	emptyDoc	"Granted."
//	@Failure		400	{object}	errorDoc	"invalid_argument."
//	@Failure		401	{object}	errorDoc	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403	{object}	errorDoc	"permission_denied: only the root role may."
//	@Failure		404	{object}	errorDoc	"user_not_found or role_not_found."
//	@Failure		500	{object}	errorDoc	"internal: an unexpected failure."
//	@Failure		503	{object}	errorDoc	"unavailable: the server serves no auth, or is shutting down."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/auth/users/{name}/roles/{role} [put]
func (h *Handler) grantRole(w http.ResponseWriter, r *http.Request) {
	h.adminChange(w, r, func(a *auth.Store) error {
		return a.GrantRole(chi.URLParam(r, "name"), chi.URLParam(r, "role"))
	})
}

// revokeRole serves DELETE /v1/auth/users/{name}/roles/{role}.
//
//	@Summary		Revoke a role from a user
//	@Description	Revokes the role from the user.
//	@Tags			auth
//	@ID				revokeRole
//	@Produce		json
//	@Param			name	path	string	true	"The user's name."
//	@Param			role	path	string	true	"The role's name."
//	@Success		200	{object}	emptyDoc	"Revoked."
//	@Failure		400	{object}	errorDoc	"invalid_argument: the change would leave auth enabled without a root user."
//	@Failure		401	{object}	errorDoc	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403	{object}	errorDoc	"permission_denied: only the root role may."
//	@Failure		404	{object}	errorDoc	"user_not_found or role_not_found."
//	@Failure		500	{object}	errorDoc	"internal: an unexpected failure."
//	@Failure		503	{object}	errorDoc	"unavailable: the server serves no auth, or is shutting down."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/auth/users/{name}/roles/{role} [delete]
func (h *Handler) revokeRole(w http.ResponseWriter, r *http.Request) {
	h.adminChange(w, r, func(a *auth.Store) error {
		return a.RevokeRole(chi.URLParam(r, "name"), chi.URLParam(r, "role"))
	})
}

// adminChange runs a change that answers an empty object.
func (h *Handler) adminChange(w http.ResponseWriter, r *http.Request, change func(*auth.Store) error) {
	a := h.admin(w, r)
	if a == nil {
		return
	}
	if err := change(a); err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// listRoles serves GET /v1/auth/roles.
//
//	@Summary		List roles
//	@Description	Lists every role's name, sorted.
//	@Tags			auth
//	@ID				listRoles
//	@Produce		json
//	@Success		200	{object}	roleListDoc	"The roles."
//	@Failure		401	{object}	errorDoc	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403	{object}	errorDoc	"permission_denied: only the root role may."
//	@Failure		500	{object}	errorDoc	"internal: an unexpected failure."
//	@Failure		503	{object}	errorDoc	"unavailable: the server serves no auth, or is shutting down."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/auth/roles [get]
func (h *Handler) listRoles(w http.ResponseWriter, r *http.Request) {
	if a := h.admin(w, r); a != nil {
		writeJSON(w, http.StatusOK, map[string][]string{"roles": a.Roles()})
	}
}

// addRole serves POST /v1/auth/roles.
//
//	@Summary		Add a role
//	@Description	Adds a role with no permissions.
//	@Tags			auth
//	@ID				addRole
//	@Accept			json
//	@Produce		json
//	@Param			role	body	roleNameDoc	true	"The new role's name."
//	@Success		201	{object}	roleDoc	"Added."
//	@Failure		400	{object}	errorDoc	"invalid_argument: malformed JSON or an empty name."
//	@Failure		401	{object}	errorDoc	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403	{object}	errorDoc	"permission_denied: only the root role may."
//	@Failure		409	{object}	errorDoc	"already_exists: a role with that name exists."
//	@Failure		413	{object}	errorDoc	"request_too_large: the body is over the server's --max-request-bytes."
//	@Failure		429	{object}	errorDoc	"too_many_requests: more request bytes are in flight than --max-inflight-request-bytes allows; retry later (Retry-After)."
//	@Failure		500	{object}	errorDoc	"internal: an unexpected failure."
//	@Failure		503	{object}	errorDoc	"unavailable: the server serves no auth, or is shutting down."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/auth/roles [post]
func (h *Handler) addRole(w http.ResponseWriter, r *http.Request) {
	a := h.admin(w, r)
	if a == nil {
		return
	}
	var req struct {
		Name string `json:"name"`
	}
	if err := decodeJSON(r, &req); err != nil {
		h.writeError(w, r, err)
		return
	}
	if err := a.AddRole(req.Name); err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"name": req.Name, "permissions": []any{}})
}

var accessNames = map[string]auth.Access{"read": auth.Read, "write": auth.Write, "readwrite": auth.ReadWrite}

// permissionJSON writes a permission with base64 twins for its keys.
type permissionJSON auth.Permission

func (p permissionJSON) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	b = appendBytesField(b, "key", p.Key, true)
	if len(p.End) > 0 {
		b = appendBytesField(b, "range_end", p.End, false)
	}
	t := "readwrite"
	switch p.Access {
	case auth.Read:
		t = "read"
	case auth.Write:
		t = "write"
	}
	b = append(b, `,"type":"`...)
	b = append(b, t...)
	return append(b, '"', '}'), nil
}

// getRole serves GET /v1/auth/roles/{name}.
//
//	@Summary		Get a role
//	@Description	A role and its permissions.
//	@Tags			auth
//	@ID				getRole
//	@Produce		json
//	@Param			name	path	string	true	"The role's name."
//	@Success		200	{object}	roleDoc	"The role."
//	@Failure		401	{object}	errorDoc	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403	{object}	errorDoc	"permission_denied: only the root role may."
//	@Failure		404	{object}	errorDoc	"role_not_found."
//	@Failure		500	{object}	errorDoc	"internal: an unexpected failure."
//	@Failure		503	{object}	errorDoc	"unavailable: the server serves no auth, or is shutting down."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/auth/roles/{name} [get]
func (h *Handler) getRole(w http.ResponseWriter, r *http.Request) {
	a := h.admin(w, r)
	if a == nil {
		return
	}
	role, err := a.GetRole(chi.URLParam(r, "name"))
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	perms := make([]permissionJSON, len(role.Permissions))
	for i, p := range role.Permissions {
		perms[i] = permissionJSON(p)
	}
	writeJSON(w, http.StatusOK, map[string]any{"name": role.Name, "permissions": perms})
}

// deleteRole serves DELETE /v1/auth/roles/{name}.
//
//	@Summary		Delete a role
//	@Description	Deletes a role and revokes it from every user.
//	@Tags			auth
//	@ID				deleteRole
//	@Produce		json
//	@Param			name	path	string	true	"The role's name."
//	@Success		200	{object}	emptyDoc	"Deleted."
//	@Failure		400	{object}	errorDoc	"invalid_argument: the change would leave auth enabled without a root user."
//	@Failure		401	{object}	errorDoc	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403	{object}	errorDoc	"permission_denied: only the root role may."
//	@Failure		404	{object}	errorDoc	"role_not_found."
//	@Failure		500	{object}	errorDoc	"internal: an unexpected failure."
//	@Failure		503	{object}	errorDoc	"unavailable: the server serves no auth, or is shutting down."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/auth/roles/{name} [delete]
func (h *Handler) deleteRole(w http.ResponseWriter, r *http.Request) {
	h.adminChange(w, r, func(a *auth.Store) error { return a.DeleteRole(chi.URLParam(r, "name")) })
}

// grantPermission serves POST /v1/auth/roles/{name}/permissions.
//
//	@Summary		Grant a permission to a role
//	@Description	Lets the role read, write or both on key alone, [key, range_end), every key with the prefix key (prefix=true) or every key >= key (from_key=true). A permission on the same range is replaced.
//	@Tags			auth
//	@ID				grantPermission
//	@Accept			json
//	@Produce		json
//	@Param			name	path	string	true	"The role's name."
//	@Param			permission	body	permissionRequestDoc	true	"The range and the access."
//	@Success		200	{object}	emptyDoc	"Granted."
//	@Failure		400	{object}	errorDoc	"invalid_argument: malformed JSON, a bad range or type."
//	@Failure		401	{object}	errorDoc	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403	{object}	errorDoc	"permission_denied: only the root role may."
//	@Failure		404	{object}	errorDoc	"role_not_found."
//	@Failure		413	{object}	errorDoc	"request_too_large: the body is over the server's --max-request-bytes."
//	@Failure		429	{object}	errorDoc	"too_many_requests: more request bytes are in flight than --max-inflight-request-bytes allows; retry later (Retry-After)."
//	@Failure		500	{object}	errorDoc	"internal: an unexpected failure."
//	@Failure		503	{object}	errorDoc	"unavailable: the server serves no auth, or is shutting down."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/auth/roles/{name}/permissions [post]
func (h *Handler) grantPermission(w http.ResponseWriter, r *http.Request) {
	a := h.admin(w, r)
	if a == nil {
		return
	}
	var req struct {
		selectorJSON
		Type string `json:"type"`
	}
	if err := decodeJSON(r, &req); err != nil {
		h.writeError(w, r, err)
		return
	}
	sel, err := req.selection()
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	access, ok := accessNames[req.Type]
	if !ok {
		h.writeError(w, r, badRequest("type must be read, write or readwrite, not %q", req.Type))
		return
	}
	if err := a.GrantPermission(chi.URLParam(r, "name"), auth.Permission{Key: sel.Key, End: sel.End, Access: access}); err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// revokePermission serves DELETE /v1/auth/roles/{name}/permissions.
//
//	@Summary		Revoke a permission from a role
//	@Description	Removes the role's permission on exactly the range given (key alone, key and range_end, prefix or from_key, as when it was granted).
//	@Tags			auth
//	@ID				revokePermission
//	@Produce		json
//	@Param			name	path	string	true	"The role's name."
//	@Param			key	query	string	false	"The permission's key; key or key_base64 is required."
//	@Param			key_base64	query	string	false	"The key in standard base64."	format(byte)
//	@Param			range_end	query	string	false	"The permission's range end. At most one of range_end, prefix and from_key."
//	@Param			range_end_base64	query	string	false	"range_end in standard base64."	format(byte)
//	@Param			prefix	query	boolean	false	"The permission covers the prefix key."
//	@Param			from_key	query	boolean	false	"The permission covers every key >= key."
//	@Success		200	{object}	emptyDoc	"Revoked."
//	@Failure		400	{object}	errorDoc	"invalid_argument: no key, a bad range."
//	@Failure		401	{object}	errorDoc	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403	{object}	errorDoc	"permission_denied: only the root role may."
//	@Failure		404	{object}	errorDoc	"role_not_found or permission_not_found."
//	@Failure		500	{object}	errorDoc	"internal: an unexpected failure."
//	@Failure		503	{object}	errorDoc	"unavailable: the server serves no auth, or is shutting down."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/auth/roles/{name}/permissions [delete]
func (h *Handler) revokePermission(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r, selectorParams)
	sel := q.selector(true)
	if q.err != nil {
		h.writeError(w, r, q.err)
		return
	}
	a := h.admin(w, r)
	if a == nil {
		return
	}
	if err := a.RevokePermission(chi.URLParam(r, "name"), sel.Key, sel.End); err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}
