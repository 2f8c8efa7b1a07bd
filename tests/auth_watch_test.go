package tests

import (
	"net/http"
	"testing"

	"github.com/httpkv/httpkv/tests/e2e"
)

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
	aliceWatch := e2e.OpenWatch(t, f.s, "key=app/&prefix=true", alice.Header()...)
	bobWatch := e2e.OpenWatch(t, f.s, "key=app/&prefix=true", bob.Header()...)
	carolWatch := e2e.OpenWatch(t, f.s, "key=m&from_key=true", carol.Header()...)

	e2e.AuthDo(t, f.s, f.root, http.StatusOK, "PUT", "/v1/auth/users/alice/password", `{"password":"alice-new"}`)
	e2e.WantCanceled(t, aliceWatch, "token revoked", e2e.WatchTimeout)
	// Bob's stream goes on.
	rev := f.s.Do(t, "PUT", e2e.KeyPath("app/a"), []byte("v2"), f.root.Header()...).Want(t, http.StatusOK).Revision(t)
	if m := bobWatch.NextData(e2e.WatchTimeout); m.ID != rev {
		t.Fatalf("bob's watch got %v after alice's password changed, want the put at %d", m.Raw, rev)
	}

	e2e.AuthDo(t, f.s, f.root, http.StatusOK, "DELETE", "/v1/auth/users/bob", "")
	e2e.WantCanceled(t, bobWatch, "user deleted", e2e.WatchTimeout)

	e2e.AuthDo(t, f.s, f.root, http.StatusOK, "POST", "/v1/auth/disable", "")
	e2e.WantCanceled(t, carolWatch, "auth disabled", e2e.WatchTimeout)
}

// TestAuthWatchEndsWhenTokenExpires: with tokens that live 2 seconds, a
// watch stream opened with one ends with event: canceled ("token
// expired") once it expires, though nothing about its user changed.
func TestAuthWatchEndsWhenTokenExpires(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t, e2e.AuthBcryptCost, "--auth-token-ttl=2s")
	e2e.EnableAuth(t, s, "pw")
	root := e2e.AuthCaller{Name: "root", Token: e2e.AuthLogin(t, s, "root", "pw")}
	w := e2e.OpenWatch(t, s, "key=k", root.Header()...)
	e2e.WantCanceled(t, w, "token expired", e2e.WatchTimeout)
}
