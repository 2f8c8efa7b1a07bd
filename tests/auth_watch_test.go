package tests

import (
	"net/http"
	"testing"
	"time"

	"github.com/httpkv/httpkv/tests/e2e"
)

// wantCanceled fails unless the stream's next message is event: canceled
// with the reason, and then the stream ends.
func wantCanceled(tb testing.TB, w *watchStream, reason string, timeout time.Duration) {
	tb.Helper()
	m := w.next(timeout)
	if m.Kind != "canceled" || m.Reason != reason {
		tb.Fatalf("%s: %v, want event: canceled with reason %q", w.req, m.raw, reason)
	}
	w.wantEnd(e2e.WatchTimeout)
}

// TestAuthWatchEndsWithItsCredentials: a watch stream lives no longer
// than the token it was opened with. It ends with event: canceled, and a
// reason, when its user's password changes, when its user is deleted,
// and when auth is disabled; a change to someone else's credentials
// leaves it streaming.
func TestAuthWatchEndsWithItsCredentials(t *testing.T) {
	t.Parallel()
	f := startRBAC(t)
	alice, bob, carol := f.callers[1], f.callers[2], f.callers[3]
	if alice.Name != "alice" || bob.Name != "bob" || carol.Name != "carol" {
		t.Fatalf("callers %s %s %s, want alice bob carol", alice.Name, bob.Name, carol.Name)
	}
	aliceWatch := openWatch(t, f.s, "key=app/&prefix=true", alice.Header()...)
	bobWatch := openWatch(t, f.s, "key=app/&prefix=true", bob.Header()...)
	carolWatch := openWatch(t, f.s, "key=m&from_key=true", carol.Header()...)

	e2e.AuthDo(t, f.s, f.root, http.StatusOK, "PUT", "/v1/auth/users/alice/password", `{"password":"alice-new"}`)
	wantCanceled(t, aliceWatch, "token revoked", e2e.WatchTimeout)
	// Bob's stream goes on.
	rev := f.s.Do(t, "PUT", e2e.KeyPath("app/a"), []byte("v2"), f.root.Header()...).Want(t, http.StatusOK).Revision(t)
	if m := bobWatch.nextData(e2e.WatchTimeout); m.ID != rev {
		t.Fatalf("bob's watch got %v after alice's password changed, want the put at %d", m.raw, rev)
	}

	e2e.AuthDo(t, f.s, f.root, http.StatusOK, "DELETE", "/v1/auth/users/bob", "")
	wantCanceled(t, bobWatch, "user deleted", e2e.WatchTimeout)

	e2e.AuthDo(t, f.s, f.root, http.StatusOK, "POST", "/v1/auth/disable", "")
	wantCanceled(t, carolWatch, "auth disabled", e2e.WatchTimeout)
}

// TestAuthWatchEndsWhenTokenExpires: with tokens that live 2 seconds, a
// watch stream opened with one ends with event: canceled ("token
// expired") once it expires, though nothing about its user changed.
func TestAuthWatchEndsWhenTokenExpires(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t, e2e.AuthBcryptCost, "--auth-token-ttl=2s")
	e2e.EnableAuth(t, s, "pw")
	root := e2e.AuthCaller{Name: "root", Token: e2e.AuthLogin(t, s, "root", "pw")}
	w := openWatch(t, s, "key=k", root.Header()...)
	wantCanceled(t, w, "token expired", e2e.WatchTimeout)
}
