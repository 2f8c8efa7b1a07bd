package tests

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/httpkv/httpkv/tests/e2e"
)

// TestWatchStreamAuth: with auth on, a stream is its creator's: other
// users get 404 for every operation on it, a caller without a token 401.
// Every watch is checked as a single watch would be (403 for a range the
// user may not read, the whole creation refused with it). Permissions
// are checked again as they change: a watcher whose range its user may
// no longer read ends with canceled (permission denied), the others go
// on. A password change ends the connection of the old token, not the
// stream: a new token resumes it by Last-Event-ID. Deleting the user
// ends every watcher with canceled (user deleted), and the stream.
func TestWatchStreamAuth(t *testing.T) {
	t.Parallel()
	f := startRBAC(t)
	alice, bob := f.callers[1], f.callers[2]
	if alice.Name != "alice" || bob.Name != "bob" {
		t.Fatalf("callers %s %s, want alice bob", alice.Name, bob.Name)
	}
	s := f.s
	s.Do(t, "POST", "/v1/watch/streams", []byte(`{"watches":[{"key":"app/","prefix":true},{"key":"cfg"}]}`),
		alice.Header("Content-Type", "application/json")...).WantError(t, http.StatusForbidden, "permission_denied")
	stream, ids := s.CreateStream(t, `{"watches":[{"key":"app/","prefix":true}]}`, alice.Header()...)
	app := ids[0]
	logs := s.AddWatch(t, stream, `{"key":"logs/","prefix":true}`, alice.Header()...)
	s.Do(t, "POST", "/v1/watch/streams/"+stream+"/watches", []byte(`{"key":"cfg"}`), alice.Header()...).
		WantError(t, http.StatusForbidden, "permission_denied")

	// Not bob's, not anyone's without a token.
	for _, op := range []struct{ method, path, body string }{
		{"GET", "/v1/watch/streams/" + stream, ""},
		{"POST", "/v1/watch/streams/" + stream + "/watches", `{"key":"app/a"}`},
		{"DELETE", fmt.Sprintf("/v1/watch/streams/%s/watches/%d", stream, app), ""},
		{"DELETE", "/v1/watch/streams/" + stream, ""},
	} {
		var body []byte
		if op.body != "" {
			body = []byte(op.body)
		}
		s.Do(t, op.method, op.path, body, bob.Header()...).WantError(t, http.StatusNotFound, "stream_not_found")
		e2e.WantRefused(t, s.Do(t, op.method, op.path, body), true)
	}
	// A browser's EventSource sends its token in the query: accepted on
	// the stream's GET alone.
	s.Do(t, "POST", "/v1/watch/streams/"+stream+"/watches?access_token="+url.QueryEscape(alice.Token), []byte(`{"key":"app/a"}`)).
		WantError(t, http.StatusUnauthorized, "unauthenticated")
	r := openStreamQuery(t, s, stream, "access_token="+url.QueryEscape(alice.Token))
	l := newStreamLedger(t)
	l.readUntil(r, e2e.WatchTimeout, func() bool { return l.watcher(app).created && l.watcher(logs).created })

	e2e.AuthDo(t, s, f.root, http.StatusOK, "DELETE", "/v1/auth/users/alice/roles/logs-r", "")
	l.readUntil(r, e2e.WatchTimeout, l.ended(logs))
	if got := l.watcher(logs).final; got != "canceled: permission denied" {
		t.Fatalf("alice's logs/ watcher after her read on logs/ was revoked: %q, want canceled: permission denied", got)
	}
	rev := s.Do(t, "PUT", e2e.KeyPath("app/1"), []byte("one"), f.root.Header()...).Want(t, http.StatusOK).Revision(t)
	want := map[int64][]string{app: {fmt.Sprintf("put app/1=one@%d", rev)}}
	got := l.readUntil(r, e2e.WatchTimeout, l.has(want))

	// A new password revokes the token: its connection ends, the stream
	// does not.
	e2e.AuthDo(t, s, f.root, http.StatusOK, "PUT", "/v1/auth/users/alice/password", `{"password":"alice-new"}`)
	r.wantEnd(e2e.WatchTimeout)
	rev = s.Do(t, "PUT", e2e.KeyPath("app/2"), []byte("two"), f.root.Header()...).Want(t, http.StatusOK).Revision(t)
	want[app] = append(want[app], fmt.Sprintf("put app/2=two@%d", rev))
	alice.Token = e2e.AuthLogin(t, s, "alice", "alice-new")
	r = openStream(t, s, stream, got[len(got)-1].ID, alice.Header()...)
	l.readUntil(r, e2e.WatchTimeout, l.has(want))
	l.wantEvents(want)

	e2e.AuthDo(t, s, f.root, http.StatusOK, "DELETE", "/v1/auth/users/alice", "")
	l.readUntil(r, e2e.WatchTimeout, l.ended(app))
	if got := l.watcher(app).final; got != "canceled: user deleted" {
		t.Fatalf("alice's stream after she was deleted: %q, want canceled: user deleted", got)
	}
	r.wantEnd(e2e.WatchTimeout)
	s.Do(t, "DELETE", "/v1/watch/streams/"+stream, nil, f.root.Header()...).WantError(t, http.StatusNotFound, "stream_not_found")
}

// TestWatchStreamTokenExpiry: with tokens that live 2 seconds, the
// connection that read a stream with one ends when it expires; the
// stream goes on, and a new token resumes it where it was.
func TestWatchStreamTokenExpiry(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t, e2e.AuthBcryptCost, "--auth-token-ttl=2s")
	e2e.EnableAuth(t, s, "pw")
	root := e2e.AuthCaller{Name: "root", Token: e2e.AuthLogin(t, s, "root", "pw")}
	stream, ids := s.CreateStream(t, `{"watches":[{"key":"x"}]}`, root.Header()...)
	r := openStream(t, s, stream, noCursor, root.Header()...)
	l := newStreamLedger(t)
	got := l.readUntil(r, e2e.WatchTimeout, func() bool { return l.watcher(ids[0]).created })
	r.wantEnd(e2e.WatchTimeout)
	root.Token = e2e.AuthLogin(t, s, "root", "pw")
	rev := s.Do(t, "PUT", e2e.KeyPath("x"), []byte("1"), root.Header()...).Want(t, http.StatusOK).Revision(t)
	r = openStream(t, s, stream, got[len(got)-1].ID, root.Header()...)
	want := map[int64][]string{ids[0]: {fmt.Sprintf("put x=1@%d", rev)}}
	l.readUntil(r, e2e.WatchTimeout, l.has(want))
	l.wantEvents(want)
}
