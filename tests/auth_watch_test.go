package tests

import (
	"net/http"
	"testing"
	"time"
)

// wantCanceled fails unless the stream's next message is event: canceled
// with the reason, and then the stream ends.
func wantCanceled(tb testing.TB, w *watchStream, reason string, timeout time.Duration) {
	tb.Helper()
	m := w.next(timeout)
	if m.Kind != "canceled" || m.Reason != reason {
		tb.Fatalf("%s: %v, want event: canceled with reason %q", w.req, m.raw, reason)
	}
	w.wantEnd(watchTimeout)
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
	if alice.name != "alice" || bob.name != "bob" || carol.name != "carol" {
		t.Fatalf("callers %s %s %s, want alice bob carol", alice.name, bob.name, carol.name)
	}
	aliceWatch := openWatch(t, f.s, "key=app/&prefix=true", alice.header()...)
	bobWatch := openWatch(t, f.s, "key=app/&prefix=true", bob.header()...)
	carolWatch := openWatch(t, f.s, "key=m&from_key=true", carol.header()...)

	authDo(t, f.s, f.root, http.StatusOK, "PUT", "/v1/auth/users/alice/password", `{"password":"alice-new"}`)
	wantCanceled(t, aliceWatch, "token revoked", watchTimeout)
	// Bob's stream goes on.
	rev := f.s.do(t, "PUT", keyPath("app/a"), []byte("v2"), f.root.header()...).want(t, http.StatusOK).revision(t)
	if m := bobWatch.nextData(watchTimeout); m.ID != rev {
		t.Fatalf("bob's watch got %v after alice's password changed, want the put at %d", m.raw, rev)
	}

	authDo(t, f.s, f.root, http.StatusOK, "DELETE", "/v1/auth/users/bob", "")
	wantCanceled(t, bobWatch, "user deleted", watchTimeout)

	authDo(t, f.s, f.root, http.StatusOK, "POST", "/v1/auth/disable", "")
	wantCanceled(t, carolWatch, "auth disabled", watchTimeout)
}

// TestAuthWatchEndsWhenTokenExpires: with tokens that live 2 seconds, a
// watch stream opened with one ends with event: canceled ("token
// expired") once it expires, though nothing about its user changed.
func TestAuthWatchEndsWhenTokenExpires(t *testing.T) {
	t.Parallel()
	s := startServer(t, authBcryptCost, "--auth-token-ttl=2s")
	enableAuth(t, s, "pw")
	root := authCaller{name: "root", token: authLogin(t, s, "root", "pw")}
	w := openWatch(t, s, "key=k", root.header()...)
	wantCanceled(t, w, "token expired", watchTimeout)
}
