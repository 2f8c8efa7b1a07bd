package tests

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
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
	if alice.name != "alice" || bob.name != "bob" {
		t.Fatalf("callers %s %s, want alice bob", alice.name, bob.name)
	}
	s := f.s
	s.do(t, "POST", "/v1/watch/streams", []byte(`{"watches":[{"key":"app/","prefix":true},{"key":"cfg"}]}`),
		alice.header("Content-Type", "application/json")...).wantError(t, http.StatusForbidden, "permission_denied")
	stream, ids := s.createStream(t, `{"watches":[{"key":"app/","prefix":true}]}`, alice.header()...)
	app := ids[0]
	logs := s.addWatch(t, stream, `{"key":"logs/","prefix":true}`, alice.header()...)
	s.do(t, "POST", "/v1/watch/streams/"+stream+"/watches", []byte(`{"key":"cfg"}`), alice.header()...).
		wantError(t, http.StatusForbidden, "permission_denied")

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
		s.do(t, op.method, op.path, body, bob.header()...).wantError(t, http.StatusNotFound, "stream_not_found")
		wantRefused(t, s.do(t, op.method, op.path, body), true)
	}
	// A browser's EventSource sends its token in the query: accepted on
	// the stream's GET alone.
	s.do(t, "POST", "/v1/watch/streams/"+stream+"/watches?access_token="+url.QueryEscape(alice.token), []byte(`{"key":"app/a"}`)).
		wantError(t, http.StatusUnauthorized, "unauthenticated")
	r := openStreamQuery(t, s, stream, "access_token="+url.QueryEscape(alice.token))
	l := newStreamLedger(t)
	l.readUntil(r, watchTimeout, func() bool { return l.watcher(app).created && l.watcher(logs).created })

	authDo(t, s, f.root, http.StatusOK, "DELETE", "/v1/auth/users/alice/roles/logs-r", "")
	l.readUntil(r, watchTimeout, l.ended(logs))
	if got := l.watcher(logs).final; got != "canceled: permission denied" {
		t.Fatalf("alice's logs/ watcher after her read on logs/ was revoked: %q, want canceled: permission denied", got)
	}
	rev := s.do(t, "PUT", keyPath("app/1"), []byte("one"), f.root.header()...).want(t, http.StatusOK).revision(t)
	want := map[int64][]string{app: {fmt.Sprintf("put app/1=one@%d", rev)}}
	got := l.readUntil(r, watchTimeout, l.has(want))

	// A new password revokes the token: its connection ends, the stream
	// does not.
	authDo(t, s, f.root, http.StatusOK, "PUT", "/v1/auth/users/alice/password", `{"password":"alice-new"}`)
	r.wantEnd(watchTimeout)
	rev = s.do(t, "PUT", keyPath("app/2"), []byte("two"), f.root.header()...).want(t, http.StatusOK).revision(t)
	want[app] = append(want[app], fmt.Sprintf("put app/2=two@%d", rev))
	alice.token = authLogin(t, s, "alice", "alice-new")
	r = openStream(t, s, stream, got[len(got)-1].ID, alice.header()...)
	l.readUntil(r, watchTimeout, l.has(want))
	l.wantEvents(want)

	authDo(t, s, f.root, http.StatusOK, "DELETE", "/v1/auth/users/alice", "")
	l.readUntil(r, watchTimeout, l.ended(app))
	if got := l.watcher(app).final; got != "canceled: user deleted" {
		t.Fatalf("alice's stream after she was deleted: %q, want canceled: user deleted", got)
	}
	r.wantEnd(watchTimeout)
	s.do(t, "DELETE", "/v1/watch/streams/"+stream, nil, f.root.header()...).wantError(t, http.StatusNotFound, "stream_not_found")
}

// TestWatchStreamTokenExpiry: with tokens that live 2 seconds, the
// connection that read a stream with one ends when it expires; the
// stream goes on, and a new token resumes it where it was.
func TestWatchStreamTokenExpiry(t *testing.T) {
	t.Parallel()
	s := startServer(t, authBcryptCost, "--auth-token-ttl=2s")
	enableAuth(t, s, "pw")
	root := authCaller{name: "root", token: authLogin(t, s, "root", "pw")}
	stream, ids := s.createStream(t, `{"watches":[{"key":"x"}]}`, root.header()...)
	r := openStream(t, s, stream, noCursor, root.header()...)
	l := newStreamLedger(t)
	got := l.readUntil(r, watchTimeout, func() bool { return l.watcher(ids[0]).created })
	r.wantEnd(watchTimeout)
	root.token = authLogin(t, s, "root", "pw")
	rev := s.do(t, "PUT", keyPath("x"), []byte("1"), root.header()...).want(t, http.StatusOK).revision(t)
	r = openStream(t, s, stream, got[len(got)-1].ID, root.header()...)
	want := map[int64][]string{ids[0]: {fmt.Sprintf("put x=1@%d", rev)}}
	l.readUntil(r, watchTimeout, l.has(want))
	l.wantEvents(want)
}
