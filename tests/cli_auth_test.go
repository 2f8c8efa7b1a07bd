package tests

import (
	"strings"
	"testing"

	"github.com/httpkv/httpkv/tests/e2e"
)

// TestCLIAuth drives user, role and auth: root is made, auth turned on,
// and from then on the commands log in with --user (or HTTPKV_USER) or
// send --token; a user's permissions decide what it may do.
func TestCLIAuth(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t, "--bcrypt-cost=4")
	u := s.URL
	cliOK(t, u, "", "user", "add", "root:s3cret")
	// A password on stdin, when there is no terminal to ask on.
	cliOK(t, u, "w3b\n", "user", "add", "web")
	cliOK(t, u, "", "user", "grant-role", "root", "root")
	if got := cliOK(t, u, "", "auth", "enable"); got != "auth enabled\n" {
		t.Errorf("auth enable = %q", got)
	}
	cliFails(t, u, 1, "httpkv: unauthenticated: ", "get", "a")
	cliFails(t, u, 1, "httpkv: unauthenticated: ", "get", "a", "--user", "root:wrong")
	root := []string{"--user", "root:s3cret"}

	cliOK(t, u, "", append([]string{"role", "add", "config-reader"}, root...)...)
	cliOK(t, u, "", append([]string{"role", "grant-permission", "config-reader", "read", "config/", "--prefix"}, root...)...)
	if got := cliOK(t, u, "", append([]string{"role", "get", "config-reader"}, root...)...); got != "read [\"config/\", \"config0\")\n" {
		t.Errorf("role get = %q, want read on the prefix config/", got)
	}
	jsonLines(t, "role get", cliOK(t, u, "", append([]string{"role", "get", "config-reader", "-o", "json"}, root...)...), "Role")
	cliOK(t, u, "", append([]string{"user", "grant-role", "web", "config-reader"}, root...)...)
	if got := cliOK(t, u, "", append([]string{"user", "get", "web"}, root...)...); got != "config-reader\n" {
		t.Errorf("user get web = %q, want config-reader", got)
	}
	if got := cliOK(t, u, "", append([]string{"user", "list"}, root...)...); got != "root\nweb\n" {
		t.Errorf("user list = %q, want root and web", got)
	}
	if got := cliOK(t, u, "", append([]string{"role", "list"}, root...)...); !strings.Contains(got, "config-reader\n") {
		t.Errorf("role list = %q, want config-reader", got)
	}
	cliOK(t, u, "", append([]string{"put", "config/db/url", "postgres://db"}, root...)...)

	// web may read config/, and only read it.
	if got := cliOK(t, u, "", "get", "config/db/url", "-o", "value", "--user", "web:w3b"); got != "postgres://db" {
		t.Errorf("web's get = %q", got)
	}
	cliFails(t, u, 1, "httpkv: permission_denied: ", "put", "config/db/url", "x", "--user", "web:w3b")
	cliFails(t, u, 1, "httpkv: permission_denied: ", "get", "other", "--user", "web:w3b")

	// A token from the API works as --token.
	token := loginToken(t, s, "web", "w3b")
	if got := cliOK(t, u, "", "get", "config/db/url", "-o", "value", "--token", token); got != "postgres://db" {
		t.Errorf("get --token = %q", got)
	}
	// The password changed: web's old one no longer logs in.
	cliOK(t, u, "", append([]string{"user", "passwd", "web:n3w"}, root...)...)
	cliFails(t, u, 1, "unauthenticated", "get", "config/db/url", "--user", "web:w3b")
	cliOK(t, u, "", "get", "config/db/url", "--user", "web:n3w")

	cliOK(t, u, "", append([]string{"role", "revoke-permission", "config-reader", "config/", "--prefix"}, root...)...)
	cliFails(t, u, 1, "permission_denied", "get", "config/db/url", "--user", "web:n3w")
	cliOK(t, u, "", append([]string{"user", "revoke-role", "web", "config-reader"}, root...)...)
	cliOK(t, u, "", append([]string{"user", "delete", "web"}, root...)...)
	cliOK(t, u, "", append([]string{"role", "delete", "config-reader"}, root...)...)
	cliFails(t, u, 1, "httpkv: user_not_found: ", append([]string{"user", "get", "web"}, root...)...)
	if got := cliOK(t, u, "", append([]string{"auth", "status", "-o", "value"}, root...)...); got != "true\n" {
		t.Errorf("auth status -o value = %q, want true", got)
	}
	cliOK(t, u, "", append([]string{"auth", "disable"}, root...)...)
	if got := cliOK(t, u, "", "auth", "status"); got != "auth disabled\n" {
		t.Errorf("auth status = %q, want disabled", got)
	}
}

// loginToken asks the server for a token of name.
func loginToken(tb testing.TB, s *e2e.Server, name, password string) string {
	tb.Helper()
	var tok struct{ Token string }
	s.Do(tb, "POST", "/v1/auth/token", []byte(`{"name":"`+name+`","password":"`+password+`"}`)).Ok(tb, 200, &tok)
	return tok.Token
}
