package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/openapi/client"
)

// AuthBcryptCost keeps password hashing cheap in the tests: the server
// hashes at etcd's cost by default, which takes seconds under -race.
const AuthBcryptCost = "--bcrypt-cost=4"

// AuthCaller is who sends a request of the RBAC tests: a user with a
// token, or no token at all.
type AuthCaller struct {
	Name  string
	Token string // "" sends no Authorization header
}

// Header returns the request headers that carry the caller's token.
func (c AuthCaller) Header(more ...string) []string {
	if c.Token == "" {
		return more
	}
	return append([]string{"Authorization", "Bearer " + c.Token}, more...)
}

// AuthLogin asks for a token with the password.
func AuthLogin(tb testing.TB, s *Server, name, password string) string {
	tb.Helper()
	var res client.Token
	body, _ := json.Marshal(map[string]string{"name": name, "password": password})
	r := s.Do(tb, "POST", "/v1/auth/token", body, "Content-Type", "application/json").Ok(tb, http.StatusOK, &res)
	if res.Token == "" || res.Ttl <= 0 {
		tb.Fatalf("%s as %s = %s, want a token and a positive ttl", r.Req, name, r.Body)
	}
	return res.Token
}

// AuthDo sends a request as root (or with no token while auth is off) and
// fails unless it answers want.
func AuthDo(tb testing.TB, s *Server, root AuthCaller, want int, method, path, body string) *Reply {
	tb.Helper()
	var b []byte
	if body != "" {
		b = []byte(body)
	}
	return s.Do(tb, method, path, b, root.Header("Content-Type", "application/json")...).Want(tb, want)
}

// EnableAuth creates the root user with the password, gives it the root
// role and enables auth.
func EnableAuth(tb testing.TB, s *Server, rootPassword string) {
	tb.Helper()
	none := AuthCaller{}
	AuthDo(tb, s, none, http.StatusCreated, "POST", "/v1/auth/users", fmt.Sprintf(`{"name":"root","password":%q}`, rootPassword))
	AuthDo(tb, s, none, http.StatusOK, "PUT", "/v1/auth/users/root/roles/root", "")
	AuthDo(tb, s, none, http.StatusOK, "POST", "/v1/auth/enable", "")
}

// PathSegment escapes the slashes of a name for a path.
func PathSegment(name string) string {
	out := make([]byte, 0, len(name)+4)
	for i := 0; i < len(name); i++ {
		if name[i] == '/' {
			out = append(out, "%2F"...)
			continue
		}
		out = append(out, name[i])
	}
	return string(out)
}

// Status returns the server's status, read as root.
func (c AuthCaller) Status(tb testing.TB, s *Server) client.Status {
	tb.Helper()
	var st client.Status
	s.Do(tb, "GET", "/v1/status", nil, c.Header()...).Ok(tb, http.StatusOK, &st)
	return st
}

// WantRefused fails unless the answer refuses the caller as the contract
// says: 401 unauthenticated with WWW-Authenticate: Bearer for a caller
// without a valid token, 403 permission_denied for one with.
func WantRefused(tb testing.TB, r *Reply, unauthenticated bool) {
	tb.Helper()
	if unauthenticated {
		r.WantError(tb, http.StatusUnauthorized, "unauthenticated")
		if got := r.Header.Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer") {
			tb.Fatalf("%s = 401 with WWW-Authenticate %q, want Bearer", r.Req, got)
		}
		return
	}
	r.WantError(tb, http.StatusForbidden, "permission_denied")
}
