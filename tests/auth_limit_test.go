package tests

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/tests/e2e"
)

// login sends a token request and returns its status.
func tryLogin(tb testing.TB, s *e2e.Server, name, password string) int {
	tb.Helper()
	body := fmt.Sprintf(`{"name":%q,"password":%q}`, name, password)
	return s.Do(tb, "POST", "/v1/auth/token", []byte(body), "Content-Type", "application/json").Status
}

// TestAuthLoginLimits checks the failed-login limits end to end, with
// clients at distinct loopback addresses: five bad passwords for a user
// from one address refuse that user there (429, even the right password)
// but not from another address, so no one can lock a user out; and one
// address trying many names is refused for every name.
func TestAuthLoginLimits(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t, e2e.AuthBcryptCost)
	e2e.AuthDo(t, s, e2e.AuthCaller{}, http.StatusCreated, "POST", "/v1/auth/users", `{"name":"alice","password":"alice-pw"}`)
	e2e.EnableAuth(t, s, "root-pw")

	attacker, victim, sprayer := s.From("127.0.0.2"), s.From("127.0.0.1"), s.From("127.0.0.3")
	for i := range 5 {
		if got := tryLogin(t, attacker, "alice", "guess"); got != http.StatusUnauthorized {
			t.Fatalf("bad password %d for alice from 127.0.0.2 = %d, want 401", i+1, got)
		}
	}
	if got := tryLogin(t, attacker, "alice", "alice-pw"); got != http.StatusTooManyRequests {
		t.Fatalf("alice's password from 127.0.0.2 after 5 failures there = %d, want 429", got)
	}
	if got := tryLogin(t, victim, "alice", "alice-pw"); got != http.StatusOK {
		t.Fatalf("alice's password from 127.0.0.1 after 5 failures from 127.0.0.2 = %d, want 200: a user must not be locked out", got)
	}

	// A spray: one password on many names, from one address.
	refused := 0
	for i := range 30 {
		switch got := tryLogin(t, sprayer, fmt.Sprintf("user%d", i), "password1"); got {
		case http.StatusUnauthorized:
		case http.StatusTooManyRequests:
			refused++
		default:
			t.Fatalf("spray login %d = %d, want 401 or 429", i, got)
		}
	}
	if refused < 5 {
		t.Fatalf("30 logins for distinct names from one address: %d answered 429, want at least 5 (the per-address burst is 20)", refused)
	}
	if got := tryLogin(t, sprayer, "root", "root-pw"); got != http.StatusTooManyRequests {
		t.Fatalf("root's password from the spraying address = %d, want 429", got)
	}
	if got := tryLogin(t, victim, "root", "root-pw"); got != http.StatusOK {
		t.Fatalf("root's password from another address = %d, want 200", got)
	}
}

// TestAuthLoginHugeNames sends token requests whose names are 1 MiB (the
// body limit is 1.5 MiB): each answers 400 at once and the server keeps
// nothing of them, so its resident memory does not grow with them.
func TestAuthLoginHugeNames(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t, e2e.AuthBcryptCost)
	e2e.EnableAuth(t, s, "root-pw")

	const n, size = 150, 1 << 20
	before := s.RSS(t)
	for i := range n {
		name := strings.Repeat(string(rune('a'+i%26)), size-3) + strconv.Itoa(i%1000)
		r, err := s.Send(t.Context(), "POST", "/v1/auth/token", []byte(`{"name":"`+name+`","password":"x"}`), "Content-Type", "application/json")
		if err != nil {
			t.Fatal(err)
		}
		r.WantError(t, http.StatusBadRequest, "invalid_argument")
	}
	grown := s.RSS(t) - before
	t.Logf("resident memory grew %d MiB over %d logins of %d MiB names", grown>>20, n, size>>20)
	if grown > 64<<20 {
		t.Fatalf("resident memory grew %d MiB over %d logins with %d MiB names, want under 64 MiB: the names are kept", grown>>20, n, size>>20)
	}
}
