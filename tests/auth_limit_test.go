package tests

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/httpkv/httpkv/tests/e2e"
)

// login sends a token request and returns its status.
func tryLogin(tb testing.TB, s *e2e.Server, name, password string) int {
	tb.Helper()
	body := fmt.Sprintf(`{"name":%q,"password":%q}`, name, password)
	return s.Do(tb, "POST", "/v1/auth/token", []byte(body), "Content-Type", "application/json").Status
}

// TestAuthLoginLimits checks the failed-login limits end to end, with
// clients at distinct loopback addresses: bad passwords for a user from
// one address refuse that user there (429, even the right password) but
// not from another address, so no one can lock a user out; and one
// address trying many names is refused for every name.
//
// The limits are rates (a burst, then a token back every second or two),
// so on a loaded machine a token may come back between any two
// requests: each check goes on failing until a refusal, tries the right
// password right after it, and allows a token back meanwhile by trying
// again; the failures let through are checked against the rate, however
// long they took.
func TestAuthLoginLimits(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t, e2e.AuthBcryptCost)
	e2e.AuthDo(t, s, e2e.AuthCaller{}, http.StatusCreated, "POST", "/v1/auth/users", `{"name":"alice","password":"alice-pw"}`)
	e2e.EnableAuth(t, s, "root-pw")

	attacker, victim, sprayer := s.From("127.0.0.2"), s.From("127.0.0.1"), s.From("127.0.0.3")
	// Guessing: bad passwords for alice from one address, a burst of 5
	// then one every 2 s.
	refuseAfterFailures(t, attacker, "alice from 127.0.0.2", 5, 2*time.Second,
		func(int) (string, string) { return "alice", "guess" }, "alice", "alice-pw")
	if got := tryLogin(t, victim, "alice", "alice-pw"); got != http.StatusOK {
		t.Fatalf("alice's password from 127.0.0.1 after failures from 127.0.0.2 = %d, want 200: a user must not be locked out", got)
	}
	// A spray: one password on many names, from one address, a burst of
	// 20 then one a second.
	refuseAfterFailures(t, sprayer, "names from 127.0.0.3", 20, time.Second,
		func(i int) (string, string) { return fmt.Sprintf("user%d", i), "password1" }, "root", "root-pw")
	if got := tryLogin(t, victim, "root", "root-pw"); got != http.StatusOK {
		t.Fatalf("root's password from another address = %d, want 200", got)
	}
}

// refuseAfterFailures fails logins from c, guess(i) giving the i-th name
// and password, until the limit refuses one (429), then checks that name
// and password, right, are refused too, retrying while a token came back
// in between. It fails the test if more failures got through than a
// burst of burst, then one every every, allows over the time they took.
func refuseAfterFailures(t *testing.T, c *e2e.Server, what string, burst int, every time.Duration, guess func(i int) (string, string), name, password string) {
	t.Helper()
	start := time.Now()
	failed := 0
	for i := range 300 {
		user, pw := guess(i)
		switch got := tryLogin(t, c, user, pw); got {
		case http.StatusUnauthorized:
			failed++
			if allowed := burst + int(time.Since(start)/every) + 1; failed > allowed {
				t.Fatalf("failed logins for %s: %d answered 401 in %v, past the limit's %d", what, failed, time.Since(start), allowed)
			}
		case http.StatusTooManyRequests:
			switch got := tryLogin(t, c, name, password); got {
			case http.StatusTooManyRequests:
				return
			case http.StatusOK:
				// A token came back since the refusal: fail on.
			default:
				t.Fatalf("%s's right password after failed logins for %s = %d, want 429", name, what, got)
			}
		default:
			t.Fatalf("failed login %d for %s = %d, want 401 or 429", i, what, got)
		}
	}
	t.Fatalf("%s's right password was never refused after failed logins for %s (%d answered 401 in %v)", name, what, failed, time.Since(start))
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
