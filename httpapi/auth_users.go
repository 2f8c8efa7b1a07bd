package httpapi

import (
	"net/http"

	"github.com/httpkv/httpkv/auth"

	"github.com/httpkv/httpkv/wire"
)

// listUsers serves GET /v1/auth/users.
//
//	@Summary		List users
//	@Description	Lists every user's name, sorted.
//	@Tags			auth
//	@ID				listUsers
//	@Produce		json
//	@Success		200	{object}	wire.UserList	"The users."
//	@Failure		401	{object}	wire.ErrorResponse	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403	{object}	wire.ErrorResponse	"permission_denied: only the root role may."
//	@Failure		500	{object}	wire.ErrorResponse	"internal: an unexpected failure."
//	@Failure		503	{object}	wire.ErrorResponse	"unavailable: the server serves no auth, or is shutting down."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/auth/users [get]
func (h *Handler) listUsers(w http.ResponseWriter, r *http.Request) {
	if a := h.admin(w, r); a != nil {
		writeJSON(w, http.StatusOK, wire.UserList{Users: a.Users()})
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
//	@Param			user	body	wire.Credentials	true	"The new user's name and password."
//	@Success		201	{object}	wire.User	"Added."
//	@Failure		400	{object}	wire.ErrorResponse	"invalid_argument: malformed JSON, an empty name or password."
//	@Failure		401	{object}	wire.ErrorResponse	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403	{object}	wire.ErrorResponse	"permission_denied: only the root role may."
//	@Failure		409	{object}	wire.ErrorResponse	"already_exists: a user with that name exists."
//	@Failure		413	{object}	wire.ErrorResponse	"request_too_large: the body is over the server's --max-request-bytes."
//	@Failure		429	{object}	wire.ErrorResponse	"too_many_requests: more request bytes are in flight than --max-inflight-request-bytes allows; retry later (Retry-After)."
//	@Failure		500	{object}	wire.ErrorResponse	"internal: an unexpected failure."
//	@Failure		503	{object}	wire.ErrorResponse	"unavailable: the server serves no auth, or is shutting down."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/auth/users [post]
func (h *Handler) addUser(w http.ResponseWriter, r *http.Request) {
	a := h.admin(w, r)
	if a == nil {
		return
	}
	var req wire.Credentials
	if err := decodeJSON(r, &req); err != nil {
		h.writeError(w, r, err)
		return
	}
	if err := a.AddUser(req.Name, req.Password); err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, wire.User{Name: req.Name, Roles: []string{}})
}

// getUser serves GET /v1/auth/users/{name}.
//
//	@Summary		Get a user
//	@Description	A user and the roles granted to it.
//	@Tags			auth
//	@ID				getUser
//	@Produce		json
//	@Param			name	path	string	true	"The user's name."
//	@Success		200	{object}	wire.User	"The user."
//	@Failure		401	{object}	wire.ErrorResponse	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403	{object}	wire.ErrorResponse	"permission_denied: only the root role may."
//	@Failure		404	{object}	wire.ErrorResponse	"user_not_found."
//	@Failure		500	{object}	wire.ErrorResponse	"internal: an unexpected failure."
//	@Failure		503	{object}	wire.ErrorResponse	"unavailable: the server serves no auth, or is shutting down."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/auth/users/{name} [get]
func (h *Handler) getUser(w http.ResponseWriter, r *http.Request) {
	a := h.admin(w, r)
	if a == nil {
		return
	}
	u, err := a.GetUser(pathParam(r, "name"))
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if u.Roles == nil {
		u.Roles = []string{}
	}
	writeJSON(w, http.StatusOK, wire.User{Name: u.Name, Roles: u.Roles})
}

// deleteUser serves DELETE /v1/auth/users/{name}.
//
//	@Summary		Delete a user
//	@Description	Deletes a user; its tokens stop working.
//	@Tags			auth
//	@ID				deleteUser
//	@Produce		json
//	@Param			name	path	string	true	"The user's name."
//	@Success		200	{object}	wire.Empty	"Deleted."
//	@Failure		400	{object}	wire.ErrorResponse	"invalid_argument: the change would leave auth enabled without a root user."
//	@Failure		401	{object}	wire.ErrorResponse	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403	{object}	wire.ErrorResponse	"permission_denied: only the root role may."
//	@Failure		404	{object}	wire.ErrorResponse	"user_not_found."
//	@Failure		500	{object}	wire.ErrorResponse	"internal: an unexpected failure."
//	@Failure		503	{object}	wire.ErrorResponse	"unavailable: the server serves no auth, or is shutting down."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/auth/users/{name} [delete]
func (h *Handler) deleteUser(w http.ResponseWriter, r *http.Request) {
	h.adminChange(w, r, func(a *auth.Store) error { return a.DeleteUser(pathParam(r, "name")) })
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
//	@Param			password	body	wire.Password	true	"The new password."
//	@Success		200	{object}	wire.Empty	"Changed."
//	@Failure		400	{object}	wire.ErrorResponse	"invalid_argument: malformed JSON or an empty password."
//	@Failure		401	{object}	wire.ErrorResponse	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403	{object}	wire.ErrorResponse	"permission_denied: only the root role may."
//	@Failure		404	{object}	wire.ErrorResponse	"user_not_found."
//	@Failure		413	{object}	wire.ErrorResponse	"request_too_large: the body is over the server's --max-request-bytes."
//	@Failure		429	{object}	wire.ErrorResponse	"too_many_requests: more request bytes are in flight than --max-inflight-request-bytes allows; retry later (Retry-After)."
//	@Failure		500	{object}	wire.ErrorResponse	"internal: an unexpected failure."
//	@Failure		503	{object}	wire.ErrorResponse	"unavailable: the server serves no auth, or is shutting down."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/auth/users/{name}/password [put]
func (h *Handler) changePassword(w http.ResponseWriter, r *http.Request) {
	a := h.admin(w, r)
	if a == nil {
		return
	}
	var req wire.Password
	if err := decodeJSON(r, &req); err != nil {
		h.writeError(w, r, err)
		return
	}
	if err := a.ChangePassword(pathParam(r, "name"), req.Password); err != nil {
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
//	@Success		200	{object}	wire.Empty	"Granted."
//	@Failure		400	{object}	wire.ErrorResponse	"invalid_argument."
//	@Failure		401	{object}	wire.ErrorResponse	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403	{object}	wire.ErrorResponse	"permission_denied: only the root role may."
//	@Failure		404	{object}	wire.ErrorResponse	"user_not_found or role_not_found."
//	@Failure		500	{object}	wire.ErrorResponse	"internal: an unexpected failure."
//	@Failure		503	{object}	wire.ErrorResponse	"unavailable: the server serves no auth, or is shutting down."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/auth/users/{name}/roles/{role} [put]
func (h *Handler) grantRole(w http.ResponseWriter, r *http.Request) {
	h.adminChange(w, r, func(a *auth.Store) error {
		return a.GrantRole(pathParam(r, "name"), pathParam(r, "role"))
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
//	@Success		200	{object}	wire.Empty	"Revoked."
//	@Failure		400	{object}	wire.ErrorResponse	"invalid_argument: the change would leave auth enabled without a root user."
//	@Failure		401	{object}	wire.ErrorResponse	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403	{object}	wire.ErrorResponse	"permission_denied: only the root role may."
//	@Failure		404	{object}	wire.ErrorResponse	"user_not_found or role_not_found."
//	@Failure		500	{object}	wire.ErrorResponse	"internal: an unexpected failure."
//	@Failure		503	{object}	wire.ErrorResponse	"unavailable: the server serves no auth, or is shutting down."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/auth/users/{name}/roles/{role} [delete]
func (h *Handler) revokeRole(w http.ResponseWriter, r *http.Request) {
	h.adminChange(w, r, func(a *auth.Store) error {
		return a.RevokeRole(pathParam(r, "name"), pathParam(r, "role"))
	})
}
