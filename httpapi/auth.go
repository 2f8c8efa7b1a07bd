package httpapi

import (
	"net"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/httpkv/httpkv/auth"
)

// authErrors say how auth's errors appear on the wire. Messages never
// name keys or other users' permissions.
var authErrors = []ErrorMapping{
	{auth.ErrUnauthenticated, http.StatusUnauthorized, "unauthenticated"},
	{auth.ErrBadCredentials, http.StatusUnauthorized, "unauthenticated"},
	{auth.ErrPermissionDenied, http.StatusForbidden, "permission_denied"},
	{auth.ErrTooManyAttempts, http.StatusTooManyRequests, "too_many_requests"},
	{auth.ErrUserNotFound, http.StatusNotFound, "user_not_found"},
	{auth.ErrRoleNotFound, http.StatusNotFound, "role_not_found"},
	{auth.ErrPermissionNotFound, http.StatusNotFound, "permission_not_found"},
	{auth.ErrUserExists, http.StatusConflict, "already_exists"},
	{auth.ErrRoleExists, http.StatusConflict, "already_exists"},
	{auth.ErrRootMissing, http.StatusBadRequest, "invalid_argument"},
	{auth.ErrNotEnabled, http.StatusBadRequest, "invalid_argument"},
	{auth.ErrInvalid, http.StatusBadRequest, "invalid_argument"},
}

// authAuthorizer checks requests against an auth.Store: with auth enabled,
// a valid token, and permissions covering every key the request touches.
type authAuthorizer struct {
	a *auth.Store
}

// requestToken returns the bearer token of r: the Authorization header,
// or the access_token query parameter where a header cannot be set
// (a browser's EventSource).
func requestToken(r *http.Request) string {
	if h := r.Header.Get("Authorization"); h != "" {
		if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
			return strings.TrimSpace(h[7:])
		}
		return ""
	}
	return r.URL.Query().Get("access_token")
}

func (x authAuthorizer) Authorize(r *http.Request, a Access) error {
	if !x.a.Enabled() {
		return nil
	}
	user, err := x.a.UserOf(requestToken(r))
	if err != nil {
		return err
	}
	if x.a.IsRoot(user) {
		return nil
	}
	if a.Admin {
		return auth.ErrPermissionDenied
	}
	for _, kr := range a.Read {
		if !x.a.Allowed(user, auth.Read, kr.Key, kr.End) {
			return auth.ErrPermissionDenied
		}
	}
	for _, kr := range a.Write {
		if !x.a.Allowed(user, auth.Write, kr.Key, kr.End) {
			return auth.ErrPermissionDenied
		}
	}
	return nil
}

func (x authAuthorizer) Errors() []ErrorMapping { return authErrors }

// Changed lets watch streams check again when users or roles change.
func (x authAuthorizer) Changed() <-chan struct{} { return x.a.Changed() }

func (h *Handler) authStore(w http.ResponseWriter) *auth.Store {
	if h.cfg.Auth == nil {
		writeAPIError(w, &apiError{status: http.StatusServiceUnavailable, code: "unavailable", message: "auth is not served"})
	}
	return h.cfg.Auth
}

// authStatus serves GET /v1/auth/status; it needs no token.
func (h *Handler) authStatus(w http.ResponseWriter, r *http.Request) {
	a := h.authStore(w)
	if a == nil {
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"enabled": a.Enabled()})
}

// authEnable and authDisable serve POST /v1/auth/enable and /disable.
func (h *Handler) authEnable(w http.ResponseWriter, r *http.Request)  { h.setAuth(w, r, true) }
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

func (h *Handler) listUsers(w http.ResponseWriter, r *http.Request) {
	if a := h.admin(w, r); a != nil {
		writeJSON(w, http.StatusOK, map[string][]string{"users": a.Users()})
	}
}

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

func (h *Handler) deleteUser(w http.ResponseWriter, r *http.Request) {
	h.adminChange(w, r, func(a *auth.Store) error { return a.DeleteUser(chi.URLParam(r, "name")) })
}

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

func (h *Handler) grantRole(w http.ResponseWriter, r *http.Request) {
	h.adminChange(w, r, func(a *auth.Store) error {
		return a.GrantRole(chi.URLParam(r, "name"), chi.URLParam(r, "role"))
	})
}

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

func (h *Handler) listRoles(w http.ResponseWriter, r *http.Request) {
	if a := h.admin(w, r); a != nil {
		writeJSON(w, http.StatusOK, map[string][]string{"roles": a.Roles()})
	}
}

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

func (h *Handler) deleteRole(w http.ResponseWriter, r *http.Request) {
	h.adminChange(w, r, func(a *auth.Store) error { return a.DeleteRole(chi.URLParam(r, "name")) })
}

func (h *Handler) grantPermission(w http.ResponseWriter, r *http.Request) {
	a := h.admin(w, r)
	if a == nil {
		return
	}
	var req struct {
		Key            *string `json:"key"`
		KeyBase64      *string `json:"key_base64"`
		RangeEnd       *string `json:"range_end"`
		RangeEndBase64 *string `json:"range_end_base64"`
		Prefix         bool    `json:"prefix"`
		FromKey        bool    `json:"from_key"`
		Type           string  `json:"type"`
	}
	if err := decodeJSON(r, &req); err != nil {
		h.writeError(w, r, err)
		return
	}
	sel, err := selection(req.Key, req.KeyBase64, req.RangeEnd, req.RangeEndBase64, req.Prefix, req.FromKey)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	access, ok := accessNames[req.Type]
	if !ok {
		writeAPIError(w, badRequest("type must be read, write or readwrite, not %q", req.Type))
		return
	}
	if err := a.GrantPermission(chi.URLParam(r, "name"), auth.Permission{Key: sel.Key, End: sel.End, Access: access}); err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

func (h *Handler) revokePermission(w http.ResponseWriter, r *http.Request) {
	a := h.admin(w, r)
	if a == nil {
		return
	}
	q := newQuery(r)
	sel := q.selector(true)
	if q.err != nil {
		writeAPIError(w, q.err)
		return
	}
	if err := a.RevokePermission(chi.URLParam(r, "name"), sel.Key, sel.End); err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}
