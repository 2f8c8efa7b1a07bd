package httpapi

import (
	"net/http"

	"github.com/httpkv/httpkv/auth"

	"github.com/httpkv/httpkv/wire"
)

// listRoles serves GET /v1/auth/roles.
//
//	@Summary		List roles
//	@Description	Lists every role's name, sorted.
//	@Tags			auth
//	@ID				listRoles
//	@Produce		json
//	@Success		200	{object}	wire.RoleList	"The roles."
//	@Failure		401	{object}	wire.ErrorResponse	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403	{object}	wire.ErrorResponse	"permission_denied: only the root role may."
//	@Failure		500	{object}	wire.ErrorResponse	"internal: an unexpected failure."
//	@Failure		503	{object}	wire.ErrorResponse	"unavailable: the server serves no auth, or is shutting down."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/auth/roles [get]
func (h *Handler) listRoles(w http.ResponseWriter, r *http.Request) {
	if a := h.admin(w, r); a != nil {
		writeJSON(w, http.StatusOK, wire.RoleList{Roles: a.Roles()})
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
//	@Param			role	body	wire.RoleName	true	"The new role's name."
//	@Success		201	{object}	wire.Role	"Added."
//	@Failure		400	{object}	wire.ErrorResponse	"invalid_argument: malformed JSON or an empty name."
//	@Failure		401	{object}	wire.ErrorResponse	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403	{object}	wire.ErrorResponse	"permission_denied: only the root role may."
//	@Failure		409	{object}	wire.ErrorResponse	"already_exists: a role with that name exists."
//	@Failure		413	{object}	wire.ErrorResponse	"request_too_large: the body is over the server's --max-request-bytes."
//	@Failure		429	{object}	wire.ErrorResponse	"too_many_requests: more request bytes are in flight than --max-inflight-request-bytes allows; retry later (Retry-After)."
//	@Failure		500	{object}	wire.ErrorResponse	"internal: an unexpected failure."
//	@Failure		503	{object}	wire.ErrorResponse	"unavailable: the server serves no auth, or is shutting down."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/auth/roles [post]
func (h *Handler) addRole(w http.ResponseWriter, r *http.Request) {
	a := h.admin(w, r)
	if a == nil {
		return
	}
	var req wire.RoleName
	if err := decodeJSON(r, &req); err != nil {
		h.writeError(w, r, err)
		return
	}
	if err := a.AddRole(req.Name); err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, wire.Role{Name: req.Name, Permissions: []wire.Permission{}})
}

// newPermissionDoc is p on the wire.
func newPermissionDoc(p auth.Permission) wire.Permission {
	d := wire.Permission{Type: p.Access.String()}
	d.Key, d.KeyBase64 = wire.TextOrBase64(p.Key)
	if len(p.End) > 0 {
		d.RangeEnd, d.RangeEndBase64 = wire.TextOrBase64(p.End)
	}
	return d
}

// getRole serves GET /v1/auth/roles/{name}.
//
//	@Summary		Get a role
//	@Description	A role and its permissions.
//	@Tags			auth
//	@ID				getRole
//	@Produce		json
//	@Param			name	path	string	true	"The role's name."
//	@Success		200	{object}	wire.Role	"The role."
//	@Failure		401	{object}	wire.ErrorResponse	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403	{object}	wire.ErrorResponse	"permission_denied: only the root role may."
//	@Failure		404	{object}	wire.ErrorResponse	"role_not_found."
//	@Failure		500	{object}	wire.ErrorResponse	"internal: an unexpected failure."
//	@Failure		503	{object}	wire.ErrorResponse	"unavailable: the server serves no auth, or is shutting down."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/auth/roles/{name} [get]
func (h *Handler) getRole(w http.ResponseWriter, r *http.Request) {
	a := h.admin(w, r)
	if a == nil {
		return
	}
	role, err := a.GetRole(pathParam(r, "name"))
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	perms := make([]wire.Permission, len(role.Permissions))
	for i, p := range role.Permissions {
		perms[i] = newPermissionDoc(p)
	}
	writeJSON(w, http.StatusOK, wire.Role{Name: role.Name, Permissions: perms})
}

// deleteRole serves DELETE /v1/auth/roles/{name}.
//
//	@Summary		Delete a role
//	@Description	Deletes a role and revokes it from every user.
//	@Tags			auth
//	@ID				deleteRole
//	@Produce		json
//	@Param			name	path	string	true	"The role's name."
//	@Success		200	{object}	wire.Empty	"Deleted."
//	@Failure		400	{object}	wire.ErrorResponse	"invalid_argument: the change would leave auth enabled without a root user."
//	@Failure		401	{object}	wire.ErrorResponse	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403	{object}	wire.ErrorResponse	"permission_denied: only the root role may."
//	@Failure		404	{object}	wire.ErrorResponse	"role_not_found."
//	@Failure		500	{object}	wire.ErrorResponse	"internal: an unexpected failure."
//	@Failure		503	{object}	wire.ErrorResponse	"unavailable: the server serves no auth, or is shutting down."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/auth/roles/{name} [delete]
func (h *Handler) deleteRole(w http.ResponseWriter, r *http.Request) {
	h.adminChange(w, r, func(a *auth.Store) error { return a.DeleteRole(pathParam(r, "name")) })
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
//	@Param			permission	body	wire.PermissionRequest	true	"The range and the access."
//	@Success		200	{object}	wire.Empty	"Granted."
//	@Failure		400	{object}	wire.ErrorResponse	"invalid_argument: malformed JSON, a bad range or type."
//	@Failure		401	{object}	wire.ErrorResponse	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403	{object}	wire.ErrorResponse	"permission_denied: only the root role may."
//	@Failure		404	{object}	wire.ErrorResponse	"role_not_found."
//	@Failure		413	{object}	wire.ErrorResponse	"request_too_large: the body is over the server's --max-request-bytes."
//	@Failure		429	{object}	wire.ErrorResponse	"too_many_requests: more request bytes are in flight than --max-inflight-request-bytes allows; retry later (Retry-After)."
//	@Failure		500	{object}	wire.ErrorResponse	"internal: an unexpected failure."
//	@Failure		503	{object}	wire.ErrorResponse	"unavailable: the server serves no auth, or is shutting down."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/auth/roles/{name}/permissions [post]
func (h *Handler) grantPermission(w http.ResponseWriter, r *http.Request) {
	a := h.admin(w, r)
	if a == nil {
		return
	}
	var req wire.PermissionRequest
	if err := decodeJSON(r, &req); err != nil {
		h.writeError(w, r, err)
		return
	}
	sel, err := req.KeyRange()
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	access, ok := auth.ParseAccess(req.Type)
	if !ok {
		h.writeError(w, r, badRequest("type must be read, write or readwrite, not %q", req.Type))
		return
	}
	if err := a.GrantPermission(pathParam(r, "name"), auth.Permission{Key: sel.Key, End: sel.End, Access: access}); err != nil {
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
//	@Success		200	{object}	wire.Empty	"Revoked."
//	@Failure		400	{object}	wire.ErrorResponse	"invalid_argument: no key, a bad range."
//	@Failure		401	{object}	wire.ErrorResponse	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403	{object}	wire.ErrorResponse	"permission_denied: only the root role may."
//	@Failure		404	{object}	wire.ErrorResponse	"role_not_found or permission_not_found."
//	@Failure		500	{object}	wire.ErrorResponse	"internal: an unexpected failure."
//	@Failure		503	{object}	wire.ErrorResponse	"unavailable: the server serves no auth, or is shutting down."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/auth/roles/{name}/permissions [delete]
func (h *Handler) revokePermission(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r, wire.SelectorParams)
	sel := q.Selector(true)
	if q.Err() != nil {
		h.writeError(w, r, q.Err())
		return
	}
	a := h.admin(w, r)
	if a == nil {
		return
	}
	if err := a.RevokePermission(pathParam(r, "name"), sel.Key, sel.End); err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}
