package httpapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/httpkv/httpkv/backend/embedded"
	"github.com/httpkv/httpkv/internal/waittest"
	"github.com/httpkv/httpkv/internal/wiretest"

	"github.com/httpkv/httpkv/wire"
)

// newLocksHandler returns the real handler over the embedded backend,
// and the backend, to grant leases in.
func newLocksHandler(tb testing.TB) (*Handler, leaseEnv) {
	tb.Helper()
	h, b := newTestHandler(tb, Config{KeepAliveInterval: time.Hour})
	tb.Cleanup(h.Close)
	return h, leaseEnv{b}
}

// leaseEnv grants and revokes leases in a backend.
type leaseEnv struct{ b *embedded.Backend }

// Grant grants a lease of ttl seconds and returns its ID.
func (e leaseEnv) Grant(tb testing.TB, ttl int64) int64 {
	tb.Helper()
	l, err := e.b.Grant(context.Background(), 0, ttl)
	if err != nil {
		tb.Fatalf("Grant(ttl %d): %v", ttl, err)
	}
	return l.ID
}

// Revoke deletes a lease's keys and the lease in one revision.
func (e leaseEnv) Revoke(id int64) error {
	_, err := e.b.Revoke(context.Background(), id, nil)
	return err
}

// goServe runs serve on a goroutine of its own and hands the answer
// over, for requests that wait.
func goServe(tb testing.TB, h http.Handler, method, target, body string) <-chan *httptest.ResponseRecorder {
	ch := make(chan *httptest.ResponseRecorder, 1)
	go func() { ch <- serve(tb, h, method, target, body) }()
	return ch
}

// lockHTTP locks name for lease and returns the answer.
func lockHTTP(tb testing.TB, h http.Handler, name string, lease int64) wire.LockResponse {
	tb.Helper()
	return decodeLock(tb, mustServe(tb, h, http.StatusOK, "POST", lockTarget(name), fmt.Sprintf(`{"lease":%d}`, lease)))
}

func lockTarget(name string) string { return "/v1/locks/" + name + "?timeout=1m" }

// decodeLock checks a lock's answer and decodes it.
func decodeLock(tb testing.TB, rec *httptest.ResponseRecorder) wire.LockResponse {
	tb.Helper()
	if rec.Code != http.StatusOK {
		tb.Fatalf("lock = %d %s, want 200", rec.Code, rec.Body)
	}
	var b wire.LockResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil {
		tb.Fatalf("lock = %s: %v", rec.Body, err)
	}
	if got := rec.Header().Get("X-Revision"); got != strconv.FormatInt(b.Header.Revision, 10) || b.Header.Revision < 1 {
		tb.Fatalf("lock = %s with X-Revision %q, want the header's revision", rec.Body, got)
	}
	return b
}

func TestLockRelease(t *testing.T) {
	h, e := newLocksHandler(t)
	a, b := e.Grant(t, 60), e.Grant(t, 60)
	held := lockHTTP(t, h, "jobs", a)
	if want := fmt.Sprintf("jobs/%x", a); held.Key != want {
		t.Fatalf("lock key %q, want %q", held.Key, want)
	}
	next := goServe(t, h, "POST", lockTarget("jobs"), fmt.Sprintf(`{"lease":%d}`, b))
	if !waittest.For(streamTimeout, func() bool { return len(listKeys(t, h, "key=jobs/&prefix=true")) == 2 }) {
		t.Fatalf("the second lease is not queued: keys %q", listKeys(t, h, "key=jobs/&prefix=true"))
	}
	rec := mustServe(t, h, http.StatusOK, "DELETE", "/v1/locks/jobs?key="+held.Key, "")
	released, _ := strconv.ParseInt(rec.Header().Get("X-Revision"), 10, 64)
	if got := decodeLock(t, <-next); got.Key != fmt.Sprintf("jobs/%x", b) || got.Header.Revision < released {
		t.Fatalf("the waiter got %+v, want jobs/%x held at or after the release at %d", got, b, released)
	}
}

// TestLockNames: a name is one path segment, percent-decoded; its bytes
// need not be UTF-8.
func TestLockNames(t *testing.T) {
	h, e := newLocksHandler(t)
	id := e.Grant(t, 60)
	if got := lockHTTP(t, h, "a%2Fb%20c", id); got.Key != fmt.Sprintf("a/b c/%x", id) {
		t.Errorf("lock a%%2Fb%%20c: key %q, want a/b c/%x", got.Key, id)
	}
	if got := lockHTTP(t, h, "%FF", id); wiretest.Twin("", got.KeyBase64) != fmt.Sprintf("\xff/%x", id) || got.Key != "" {
		t.Errorf("lock %%FF: key %q, key_base64 %q; want key_base64 of \\xff/%x alone", got.Key, got.KeyBase64, id)
	}
	mustServe(t, h, http.StatusOK, "DELETE", "/v1/locks/%FF?key_base64="+urlBase64(fmt.Sprintf("\xff/%x", id)), "")
}

// urlBase64 is s in standard base64, escaped for a query string.
func urlBase64(s string) string {
	return url.QueryEscape(base64.StdEncoding.EncodeToString([]byte(s)))
}

func TestLockErrors(t *testing.T) {
	h, e := newLocksHandler(t)
	id := e.Grant(t, 60)
	other := e.Grant(t, 60)
	held := lockHTTP(t, h, "busy", id)
	leased := fmt.Sprintf(`{"lease":%d}`, other)
	for _, tt := range []struct {
		method, target, body string
		status               int
		code                 string
	}{
		{"POST", "/v1/locks/x?timeout=abc", leased, 400, "invalid_argument"},
		{"POST", "/v1/locks/x?timeout=5m1s", leased, 400, "invalid_argument"},
		{"POST", "/v1/locks/x?timeout=-1s", leased, 400, "invalid_argument"},
		{"POST", "/v1/locks/x", `{}`, 400, "invalid_argument"},
		{"POST", "/v1/locks/x", `{"lease":9007199254740992}`, 400, "invalid_argument"},
		{"POST", "/v1/locks/x", `{"lease":"1"}`, 400, "invalid_argument"},
		{"POST", "/v1/locks/x", `{"lease":1,"ttl":5}`, 400, "invalid_argument"},
		{"POST", "/v1/locks/x", `{"lease":424242}`, 404, "lease_not_found"},
		{"POST", "/v1/locks/busy?timeout=0s", leased, 408, "lock_timeout"},
		{"POST", "/v1/locks/busy?timeout=20ms", leased, 408, "lock_timeout"},
		{"DELETE", "/v1/locks/x", "", 400, "invalid_argument"},
		{"DELETE", "/v1/locks/x?key=y/1", "", 400, "invalid_argument"},
		{"DELETE", "/v1/locks/x?key=x/", "", 400, "invalid_argument"},
		{"DELETE", "/v1/locks/x?key=x/1&key_base64=eC8x", "", 400, "invalid_argument"},
		{"POST", "/v1/locks/", leased, 404, "not_found"},
	} {
		rec := serve(t, h, tt.method, tt.target, tt.body)
		if rec.Code != tt.status || errorCode(t, rec) != tt.code {
			t.Errorf("%s %s %s = %d %s, want %d %s", tt.method, tt.target, tt.body, rec.Code, rec.Body, tt.status, tt.code)
		}
	}
	if keys := listKeys(t, h, "key=busy/&prefix=true"); len(keys) != 1 || keys[0] != held.Key {
		t.Errorf("after the refused locks: busy/ holds %q, want the holder's %s alone", keys, held.Key)
	}
	if keys := listKeys(t, h, "key=x/&prefix=true"); len(keys) != 0 {
		t.Errorf("after the refused locks: x/ holds %q, want nothing", keys)
	}

	off, b := newTestHandler(t, Config{})
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"/v1/locks/x", "/v1/elections/x/campaign"} {
		if rec := serve(t, off, "POST", target, leased); rec.Code != 503 || errorCode(t, rec) != "unavailable" {
			t.Errorf("POST %s with the backend closed = %d %s, want 503 unavailable", target, rec.Code, rec.Body)
		}
	}
}

// TestLockClientLeaves: a client that disconnects while waiting leaves
// no waiting key.
func TestLockClientLeaves(t *testing.T) {
	h, e := newLocksHandler(t)
	srv := httptest.NewServer(h)
	defer srv.Close()
	held := lockHTTP(t, h, "gone", e.Grant(t, 60))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/locks/gone?timeout=5m",
			strings.NewReader(fmt.Sprintf(`{"lease":%d}`, e.Grant(t, 60))))
		resp, err := srv.Client().Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	if !waittest.For(streamTimeout, func() bool { return len(listKeys(t, h, "key=gone/&prefix=true")) == 2 }) {
		t.Fatalf("the waiter is not queued")
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatalf("the canceled request succeeded")
	}
	if !waittest.For(streamTimeout, func() bool { return len(listKeys(t, h, "key=gone/&prefix=true")) == 1 }) {
		t.Fatalf("after the waiter left: gone/ holds %q, want the holder's %s alone", listKeys(t, h, "key=gone/&prefix=true"), held.Key)
	}
}

// TestLockHandlerCloses: a lock waiting when the handler begins to close
// answers 503 at once, and leaves no key.
func TestLockHandlerCloses(t *testing.T) {
	h, e := newLocksHandler(t)
	held := lockHTTP(t, h, "sd", e.Grant(t, 60))
	waiting := goServe(t, h, "POST", lockTarget("sd"), fmt.Sprintf(`{"lease":%d}`, e.Grant(t, 60)))
	if !waittest.For(streamTimeout, func() bool { return len(listKeys(t, h, "key=sd/&prefix=true")) == 2 }) {
		t.Fatalf("the waiter is not queued")
	}
	h.Close()
	if rec := <-waiting; rec.Code != http.StatusServiceUnavailable || errorCode(t, rec) != "unavailable" {
		t.Fatalf("a lock waiting at Close = %d %s, want 503 unavailable", rec.Code, rec.Body)
	}
	if keys := listKeys(t, h, "key=sd/&prefix=true"); len(keys) != 1 || keys[0] != held.Key {
		t.Fatalf("after Close: sd/ holds %q, want the holder's %s alone", keys, held.Key)
	}
}
