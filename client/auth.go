package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
)

// TokenResponse answers Client.Login.
type TokenResponse struct {
	// Token goes in "Authorization: Bearer <token>" (WithToken).
	Token string `json:"token"`
	// TTL is the seconds until the token expires.
	TTL int64 `json:"ttl"`
	// Raw is the answer's body as the server sent it.
	Raw json.RawMessage `json:"-"`
}

// Login asks for a token: POST /v1/auth/token. Wrong credentials are
// an *Error unauthenticated.
func (c *Client) Login(ctx context.Context, name, password string) (*TokenResponse, error) {
	body, err := json.Marshal(credentialsWire{name, password})
	if err != nil {
		return nil, err
	}
	return call[TokenResponse](ctx, c, request{method: http.MethodPost, path: "/v1/auth/token", body: body, header: jsonHeader(), anonymous: true})
}

type credentialsWire struct {
	Name     string `json:"name"`
	Password string `json:"password"`
}

// AuthStatusResponse answers Client.AuthStatus, EnableAuth and DisableAuth.
type AuthStatusResponse struct {
	Enabled bool `json:"enabled"`
	// Raw is the answer's body as the server sent it.
	Raw json.RawMessage `json:"-"`
}

// AuthStatus says whether auth is enabled: GET /v1/auth/status.
func (c *Client) AuthStatus(ctx context.Context) (*AuthStatusResponse, error) {
	return call[AuthStatusResponse](ctx, c, request{method: http.MethodGet, path: "/v1/auth/status"})
}

// EnableAuth turns auth on: POST /v1/auth/enable. It needs a user root
// with the role root.
func (c *Client) EnableAuth(ctx context.Context) (*AuthStatusResponse, error) {
	return call[AuthStatusResponse](ctx, c, request{method: http.MethodPost, path: "/v1/auth/enable"})
}

// DisableAuth turns auth off: POST /v1/auth/disable.
func (c *Client) DisableAuth(ctx context.Context) (*AuthStatusResponse, error) {
	return call[AuthStatusResponse](ctx, c, request{method: http.MethodPost, path: "/v1/auth/disable"})
}

// NamesResponse answers Client.Users and Client.Roles.
type NamesResponse struct {
	Names []string `json:"-"`
	// Raw is the answer's body as the server sent it.
	Raw json.RawMessage `json:"-"`
}

// Users lists the users: GET /v1/auth/users.
func (c *Client) Users(ctx context.Context) (*NamesResponse, error) {
	return c.names(ctx, "/v1/auth/users", "users")
}

// Roles lists the roles: GET /v1/auth/roles.
func (c *Client) Roles(ctx context.Context) (*NamesResponse, error) {
	return c.names(ctx, "/v1/auth/roles", "roles")
}

func (c *Client) names(ctx context.Context, path, field string) (*NamesResponse, error) {
	var out map[string][]string
	raw, err := c.do(ctx, request{method: http.MethodGet, path: path}, &out)
	if err != nil {
		return nil, err
	}
	return &NamesResponse{Names: out[field], Raw: raw}, nil
}

// UserResponse is a user and its roles.
type UserResponse struct {
	Name  string   `json:"name"`
	Roles []string `json:"roles"`
	// Raw is the answer's body as the server sent it.
	Raw json.RawMessage `json:"-"`
}

// User reads a user: GET /v1/auth/users/{name}.
func (c *Client) User(ctx context.Context, name string) (*UserResponse, error) {
	return call[UserResponse](ctx, c, request{method: http.MethodGet, path: userPath(name)})
}

// AddUser adds a user: POST /v1/auth/users.
func (c *Client) AddUser(ctx context.Context, name, password string) (*UserResponse, error) {
	body, err := json.Marshal(credentialsWire{name, password})
	if err != nil {
		return nil, err
	}
	return call[UserResponse](ctx, c, request{method: http.MethodPost, path: "/v1/auth/users", body: body, header: jsonHeader()})
}

// DeleteUser deletes a user: DELETE /v1/auth/users/{name}.
func (c *Client) DeleteUser(ctx context.Context, name string) (*HeaderResponse, error) {
	return call[HeaderResponse](ctx, c, request{method: http.MethodDelete, path: userPath(name)})
}

// ChangePassword sets a user's password, ending its tokens:
// PUT /v1/auth/users/{name}/password.
func (c *Client) ChangePassword(ctx context.Context, name, password string) (*HeaderResponse, error) {
	body, err := json.Marshal(struct {
		Password string `json:"password"`
	}{password})
	if err != nil {
		return nil, err
	}
	return call[HeaderResponse](ctx, c, request{method: http.MethodPut, path: userPath(name) + "/password", body: body, header: jsonHeader()})
}

// GrantRole grants a role to a user: PUT /v1/auth/users/{name}/roles/{role}.
func (c *Client) GrantRole(ctx context.Context, user, role string) (*HeaderResponse, error) {
	return call[HeaderResponse](ctx, c, request{method: http.MethodPut, path: userPath(user) + "/roles/" + url.PathEscape(role)})
}

// RevokeRole takes a role from a user: DELETE /v1/auth/users/{name}/roles/{role}.
func (c *Client) RevokeRole(ctx context.Context, user, role string) (*HeaderResponse, error) {
	return call[HeaderResponse](ctx, c, request{method: http.MethodDelete, path: userPath(user) + "/roles/" + url.PathEscape(role)})
}

// Permission is a permission of a role: read, write or readwrite on a
// key or a range.
type Permission struct {
	Key []byte
	// RangeEnd is the end of the range [Key, RangeEnd); nil for the key
	// alone, and a single zero byte for every key >= Key.
	RangeEnd []byte
	// Type is read, write or readwrite.
	Type string
}

// UnmarshalJSON reads a permission of the API.
func (p *Permission) UnmarshalJSON(b []byte) error {
	var w struct {
		Key            *string `json:"key"`
		KeyBase64      []byte  `json:"key_base64"`
		RangeEnd       *string `json:"range_end"`
		RangeEndBase64 []byte  `json:"range_end_base64"`
		Type           string  `json:"type"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*p = Permission{Key: twin(w.Key, w.KeyBase64), RangeEnd: twin(w.RangeEnd, w.RangeEndBase64), Type: w.Type}
	return nil
}

// RoleResponse is a role and its permissions.
type RoleResponse struct {
	Name        string       `json:"name"`
	Permissions []Permission `json:"permissions"`
	// Raw is the answer's body as the server sent it.
	Raw json.RawMessage `json:"-"`
}

// Role reads a role: GET /v1/auth/roles/{name}.
func (c *Client) Role(ctx context.Context, name string) (*RoleResponse, error) {
	return call[RoleResponse](ctx, c, request{method: http.MethodGet, path: rolePath(name)})
}

// AddRole adds a role: POST /v1/auth/roles.
func (c *Client) AddRole(ctx context.Context, name string) (*RoleResponse, error) {
	body, err := json.Marshal(struct {
		Name string `json:"name"`
	}{name})
	if err != nil {
		return nil, err
	}
	return call[RoleResponse](ctx, c, request{method: http.MethodPost, path: "/v1/auth/roles", body: body, header: jsonHeader()})
}

// DeleteRole deletes a role: DELETE /v1/auth/roles/{name}.
func (c *Client) DeleteRole(ctx context.Context, name string) (*HeaderResponse, error) {
	return call[HeaderResponse](ctx, c, request{method: http.MethodDelete, path: rolePath(name)})
}

// GrantPermission gives a role the permission typ (read, write or
// readwrite) on the keys of sel: POST /v1/auth/roles/{name}/permissions.
func (c *Client) GrantPermission(ctx context.Context, role string, sel Selector, typ string) (*HeaderResponse, error) {
	body, err := json.Marshal(struct {
		selectorWire
		Type string `json:"type"`
	}{sel.wire(), typ})
	if err != nil {
		return nil, err
	}
	return call[HeaderResponse](ctx, c, request{method: http.MethodPost, path: rolePath(role) + "/permissions", body: body, header: jsonHeader()})
}

// RevokePermission takes from a role its permission on key, or on
// [key, rangeEnd): DELETE /v1/auth/roles/{name}/permissions.
func (c *Client) RevokePermission(ctx context.Context, role string, key, rangeEnd []byte) (*HeaderResponse, error) {
	q := url.Values{}
	addBytes(q, "key", key)
	if rangeEnd != nil {
		addBytes(q, "range_end", rangeEnd)
	}
	return call[HeaderResponse](ctx, c, request{method: http.MethodDelete, path: rolePath(role) + "/permissions", query: q})
}

func userPath(name string) string { return "/v1/auth/users/" + url.PathEscape(name) }
func rolePath(name string) string { return "/v1/auth/roles/" + url.PathEscape(name) }
