package tests

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// snapshotSource is a server with auth on, history, a compaction and
// leases: everything a snapshot must carry.
type snapshotSource struct {
	s      *e2e.Server
	root   e2e.AuthCaller
	leases map[int64][]string // lease ID: its keys
}

func newSnapshotSource(t *testing.T) *snapshotSource {
	t.Helper()
	s := e2e.StartServer(t, e2e.AuthBcryptCost)
	none := e2e.AuthCaller{Name: "setup"}
	for _, u := range []string{"root", "alice"} {
		e2e.AuthDo(t, s, none, http.StatusCreated, "POST", "/v1/auth/users", fmt.Sprintf(`{"name":%q,"password":"%s-secret"}`, u, u))
	}
	for _, r := range []string{"root", "app"} {
		e2e.AuthDo(t, s, none, http.StatusCreated, "POST", "/v1/auth/roles", fmt.Sprintf(`{"name":%q}`, r))
	}
	e2e.AuthDo(t, s, none, http.StatusOK, "POST", "/v1/auth/roles/app/permissions", `{"key":"app/","prefix":true,"type":"readwrite"}`)
	e2e.AuthDo(t, s, none, http.StatusOK, "PUT", "/v1/auth/users/root/roles/root", "")
	e2e.AuthDo(t, s, none, http.StatusOK, "PUT", "/v1/auth/users/alice/roles/app", "")
	e2e.AuthDo(t, s, none, http.StatusOK, "POST", "/v1/auth/enable", "")
	src := &snapshotSource{s: s, root: e2e.AuthCaller{Name: "root", Token: e2e.AuthLogin(t, s, "root", "root-secret")}, leases: map[int64][]string{}}

	put := func(key, value string) {
		s.Do(t, "PUT", e2e.KeyPath(key), []byte(value), src.root.Header()...).Want(t, http.StatusOK)
	}
	for round := range 4 {
		for i := range 30 {
			put(fmt.Sprintf("app/k%02d", i), fmt.Sprintf("round %d of app/k%02d", round, i))
		}
		if round == 1 {
			e2e.AuthDo(t, s, src.root, http.StatusOK, "DELETE", "/v1/kv?key=app/k0&prefix=true", "")
			var st client.Status
			s.Do(t, "GET", "/v1/status", nil, src.root.Header()...).Ok(t, http.StatusOK, &st)
			e2e.AuthDo(t, s, src.root, http.StatusOK, "POST", "/v1/compact", fmt.Sprintf(`{"revision":%d}`, st.Revision-5))
		}
	}
	e2e.AuthDo(t, s, src.root, http.StatusOK, "POST", "/v1/txn",
		`{"success":[{"put":{"key":"app/txn1","value":"a"}},{"put":{"key":"app/txn2","value":"b"}},{"delete":{"key":"app/k10"}}]}`)
	for i := range 50 {
		put(fmt.Sprintf("blob/%02d", i), strings.Repeat(string(rune('a'+i%26)), 2048))
	}
	for _, l := range []struct {
		ttl  int64
		keys []string
	}{{600, []string{"lease/a", "lease/b"}}, {900, []string{"lease/c"}}} {
		var g client.LeaseResponse
		e2e.AuthDo(t, s, src.root, http.StatusCreated, "POST", "/v1/leases", fmt.Sprintf(`{"ttl":%d}`, l.ttl)).Decode(t, &g)
		for _, k := range l.keys {
			s.Do(t, "PUT", fmt.Sprintf("%s?lease=%d", e2e.KeyPath(k), g.Id), []byte("leased"), src.root.Header()...).Want(t, http.StatusOK)
		}
		src.leases[g.Id] = l.keys
	}
	return src
}

// TestSnapshotSaveRestore saves a snapshot of a server under concurrent
// writes, restores it into a new data directory and starts a server on
// it: that server is at the snapshot's revision, with every key at every
// revision still readable, the leases (with their full TTL again) and
// the users, roles and auth switch of the source at that revision.
func TestSnapshotSaveRestore(t *testing.T) {
	t.Parallel()
	e2e.EmbeddedOnly(t, "it restores the snapshot into a data directory; an etcd snapshot is restored by etcdutl")
	src := newSnapshotSource(t)
	s := src.s
	dir := t.TempDir()
	file := filepath.Join(dir, "backup.snapshot")

	// Root only.
	alice := e2e.AuthLogin(t, s, "alice", "alice-secret")
	for _, tc := range []struct{ name, token, want string }{
		{"no token", "", "401"}, {"alice", alice, "403"}, {"a forged token", "forged", "401"},
	} {
		_, stderr, err := e2e.RunHTTPKV(t, []string{"HTTPKV_TOKEN=" + tc.token}, "snapshot", "save", "--url", s.URL, file)
		if err == nil || !strings.Contains(stderr, tc.want) {
			t.Errorf("snapshot save with %s: %v, stderr %q; want a failure saying %s", tc.name, err, stderr, tc.want)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Fatalf("snapshot save with %s left %d files, want none", tc.name, len(entries))
		}
	}

	// Writers go on while the snapshot is taken; every write they made
	// before it began must be in it.
	before := src.root.Status(t, s).Revision
	var acked atomic.Int64
	stop := make(chan struct{})
	var writers sync.WaitGroup
	for w := range 2 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				r, err := s.Send(context.Background(), "PUT", e2e.KeyPath(fmt.Sprintf("busy/%d/%04d", w, i)), []byte("v"), src.root.Header()...)
				if err != nil || r.Status != http.StatusOK {
					t.Errorf("a write during the snapshot failed: %v %+v", err, r)
					return
				}
				acked.Add(1)
			}
		}()
	}
	for acked.Load() < 20 {
		time.Sleep(time.Millisecond)
	}
	started := src.root.Status(t, s).Revision
	out := e2e.MustRunHTTPKV(t, []string{"HTTPKV_TOKEN=" + src.root.Token}, "snapshot", "save", "--url", s.URL, file)
	for n := acked.Load(); acked.Load() < n+20; {
		time.Sleep(time.Millisecond)
	}
	close(stop)
	writers.Wait()
	if t.Failed() {
		return
	}
	info := e2e.SnapshotStatus(t, file)
	after := src.root.Status(t, s)
	if info.Revision < started || info.Revision >= after.Revision || info.Revision <= before {
		t.Fatalf("the snapshot is at revision %d; the writers were at %d when it was asked for and %d after: want it in between", info.Revision, started, after.Revision)
	}
	if !strings.Contains(out, fmt.Sprintf("revision %d", info.Revision)) {
		t.Errorf("snapshot save printed %q, want it to name revision %d", out, info.Revision)
	}
	if info.CompactRevision != after.CompactRevision || info.Leases != 2 || info.Users != 2 || info.Roles != 2 || !info.AuthEnabled {
		t.Errorf("snapshot status = %+v, want compact revision %d, 2 leases, 2 users, 2 roles, auth enabled", info, after.CompactRevision)
	}

	restored := filepath.Join(t.TempDir(), "restored")
	e2e.MustRunHTTPKV(t, nil, "snapshot", "restore", file, "--data-dir", restored)
	if _, _, err := e2e.RunHTTPKV(t, nil, "snapshot", "restore", file, "--data-dir", restored); err == nil {
		t.Error("snapshot restore into the restored, non-empty directory succeeded, want it refused")
	}
	restartedAt := time.Now()
	d := e2e.StartServerIn(t, restored, e2e.AuthBcryptCost)
	// Tokens live in memory: the source's mean nothing to the new server.
	e2e.WantRefused(t, d.Do(t, "GET", "/v1/status", nil, src.root.Header()...), true)
	root := e2e.AuthCaller{Name: "root", Token: e2e.AuthLogin(t, d, "root", "root-secret")}
	st := root.Status(t, d)
	if st.Revision != info.Revision || st.CompactRevision != info.CompactRevision {
		t.Fatalf("restored server at revision %d compact %d, want the snapshot's %d and %d", st.Revision, st.CompactRevision, info.Revision, info.CompactRevision)
	}
	compareRevisions(t, s, src.root, d, root, info.CompactRevision, info.Revision)
	d.Do(t, "GET", fmt.Sprintf("/v1/kv?revision=%d", info.CompactRevision-1), nil, root.Header()...).
		WantError(t, http.StatusGone, "compacted")
	compareLeases(t, src, d, root, restartedAt)
	compareAuth(t, s, src.root, d, root)
	// The restored server goes on from the snapshot's revision.
	if rev := d.Do(t, "PUT", e2e.KeyPath("app/new"), []byte("x"), root.Header()...).Revision(t); rev != info.Revision+1 {
		t.Errorf("first write on the restored server at revision %d, want %d", rev, info.Revision+1)
	}
}

// compareRevisions fails unless the two servers hold the same keys at
// every revision from compact to rev: each key's metadata at each
// revision, and the value of every write, read at the revision it made.
func compareRevisions(tb testing.TB, a *e2e.Server, ac e2e.AuthCaller, b *e2e.Server, bc e2e.AuthCaller, compact, rev int64) {
	tb.Helper()
	list := func(s *e2e.Server, c e2e.AuthCaller, query string) string {
		var l client.ListResponse
		s.Do(tb, "GET", "/v1/kv?limit=10000&"+query, nil, c.Header()...).Ok(tb, http.StatusOK, &l)
		if l.More {
			tb.Fatalf("GET /v1/kv?%s: more than 10000 keys", query)
		}
		var out []string
		for _, kv := range l.Kvs {
			out = append(out, e2e.KVString(&kv))
		}
		return strings.Join(out, "\n")
	}
	for r := compact; r <= rev; r++ {
		queries := []string{fmt.Sprintf("revision=%d&keys_only=true", r), fmt.Sprintf("revision=%d&min_mod_revision=%d&max_mod_revision=%d", r, r, r)}
		if r == compact {
			queries = []string{fmt.Sprintf("revision=%d", r)}
		}
		for _, q := range queries {
			if got, want := list(b, bc, q), list(a, ac, q); got != want {
				tb.Fatalf("GET /v1/kv?%s on the restored server:\n%s\nwant the source's:\n%s", q, got, want)
			}
		}
	}
}

// compareLeases fails unless the restored server has the source's leases
// with their keys, each with its full TTL again.
func compareLeases(tb testing.TB, src *snapshotSource, d *e2e.Server, root e2e.AuthCaller, started time.Time) {
	tb.Helper()
	var list client.LeaseList
	d.Do(tb, "GET", "/v1/leases", nil, root.Header()...).Ok(tb, http.StatusOK, &list)
	if len(list.Leases) != len(src.leases) {
		tb.Fatalf("restored server has %d leases, want %d", len(list.Leases), len(src.leases))
	}
	for id, keys := range src.leases {
		var want, got client.LeaseTimeToLive
		src.s.Do(tb, "GET", fmt.Sprintf("/v1/leases/%d?keys=true", id), nil, src.root.Header()...).Ok(tb, http.StatusOK, &want)
		d.Do(tb, "GET", fmt.Sprintf("/v1/leases/%d?keys=true", id), nil, root.Header()...).Ok(tb, http.StatusOK, &got)
		if got.GrantedTtl != want.GrantedTtl || !slices.Equal(e2e.Deref(got.Keys), keys) || !slices.Equal(e2e.Deref(got.Keys), e2e.Deref(want.Keys)) {
			tb.Errorf("restored lease %d = %+v, want granted TTL %d and keys %q", id, got, want.GrantedTtl, keys)
		}
		// The TTL starts again with the server: it has lost no more than
		// the time since the server was started (a slow machine may take
		// a minute to get here), not what it had lost on the source.
		lost := int64(time.Since(started)/time.Second) + 1
		if got.Ttl < got.GrantedTtl-lost || got.Ttl > got.GrantedTtl {
			tb.Errorf("restored lease %d has %ds left of %d, %ds after the restart: want its full TTL from the restart", id, got.Ttl, got.GrantedTtl, lost)
		}
	}
}

// compareAuth fails unless the restored server has the source's auth
// switch, users and roles, and enforces them.
func compareAuth(tb testing.TB, a *e2e.Server, ac e2e.AuthCaller, b *e2e.Server, bc e2e.AuthCaller) {
	tb.Helper()
	for _, path := range []string{"/v1/auth/status", "/v1/auth/users", "/v1/auth/roles", "/v1/auth/users/alice", "/v1/auth/roles/app", "/v1/auth/users/root"} {
		want := a.Do(tb, "GET", path, nil, ac.Header()...).Want(tb, http.StatusOK)
		got := b.Do(tb, "GET", path, nil, bc.Header()...).Want(tb, http.StatusOK)
		if !bytes.Equal(got.Body, want.Body) {
			tb.Errorf("GET %s on the restored server = %s, want the source's %s", path, got.Body, want.Body)
		}
	}
	alice := e2e.AuthCaller{Name: "alice", Token: e2e.AuthLogin(tb, b, "alice", "alice-secret")}
	b.Do(tb, "GET", e2e.KeyPath("app/k20"), nil, alice.Header()...).Want(tb, http.StatusOK)
	e2e.WantRefused(tb, b.Do(tb, "GET", e2e.KeyPath("blob/00"), nil, alice.Header()...), false)
	e2e.WantRefused(tb, b.Do(tb, "GET", "/v1/snapshot", nil, alice.Header()...), false)
}

// TestSnapshotRefusesDamage: `snapshot save` refuses a download cut
// short, damaged or stalled, and a refusal, leaving no file behind (an
// earlier backup of the name stays as it was); `status` and `restore`
// refuse damaged files, and restore leaves no directory behind.
func TestSnapshotRefusesDamage(t *testing.T) {
	t.Parallel()
	e2e.EmbeddedOnly(t, "the tests' gateways serve a namespace, whose snapshot answers 501; TestGatewaySnapshot saves a whole cluster's")
	s := e2e.StartServer(t)
	for i := range 200 {
		s.Put(t, fmt.Sprintf("k%03d", i), strings.Repeat("v", 512))
	}
	good := s.Do(t, "GET", "/v1/snapshot", nil).Want(t, http.StatusOK).Body
	n := len(good)
	flipped := bytes.Clone(good)
	flipped[n/2] ^= 1
	cases := []struct {
		name string
		// serve answers the download.
		serve func(w http.ResponseWriter, r *http.Request)
	}{
		{"cut short", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", fmt.Sprint(n))
			w.Write(good[:n/2])
		}},
		{"hash cut off", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", fmt.Sprint(n-32))
			w.Write(good[:n-32])
		}},
		{"a byte flipped", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", fmt.Sprint(n))
			w.Write(flipped)
		}},
		{"a byte flipped, no Content-Length", func(w http.ResponseWriter, r *http.Request) {
			w.Write(flipped) // chunked, as through a proxy that drops the length
		}},
		{"stalled", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", fmt.Sprint(n))
			w.Write(good[:n/2])
			http.NewResponseController(w).Flush()
			<-r.Context().Done()
		}},
		{"refused", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"error":{"code":"unavailable","message":"shutting down"}}`))
		}},
	}
	dir := t.TempDir()
	earlier := filepath.Join(dir, "earlier.snapshot")
	e2e.MustRunHTTPKV(t, nil, "snapshot", "save", "--url", s.URL, earlier)
	earlierBytes, err := os.ReadFile(earlier)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake := httptest.NewServer(http.HandlerFunc(tc.serve))
			defer fake.Close()
			for _, name := range []string{"new.snapshot", "earlier.snapshot"} {
				_, stderr, err := e2e.RunHTTPKV(t, nil, "snapshot", "save", "--url", fake.URL, "--idle-timeout", "1s", filepath.Join(dir, name))
				if err == nil {
					t.Fatalf("snapshot save of a download %s into %s succeeded, want it refused", tc.name, name)
				}
				entries, _ := os.ReadDir(dir)
				b, _ := os.ReadFile(earlier)
				if len(entries) != 1 || !bytes.Equal(b, earlierBytes) {
					t.Fatalf("after snapshot save refused (%s): %d files, earlier backup changed: %v; want the earlier one alone, unchanged",
						strings.TrimSpace(stderr), len(entries), !bytes.Equal(b, earlierBytes))
				}
			}
		})
	}

	for _, tc := range []struct {
		name string
		b    []byte
	}{{"cut short", good[:n/2]}, {"hash cut off", good[:n-32]}, {"a byte flipped", flipped}} {
		t.Run("file "+tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "damaged.snapshot")
			if err := os.WriteFile(file, tc.b, 0o600); err != nil {
				t.Fatal(err)
			}
			if _, _, err := e2e.RunHTTPKV(t, nil, "snapshot", "status", file); err == nil {
				t.Error("snapshot status of a damaged file succeeded, want it refused")
			}
			restored := filepath.Join(t.TempDir(), "restored")
			if _, _, err := e2e.RunHTTPKV(t, nil, "snapshot", "restore", file, "--data-dir", restored); err == nil {
				t.Error("snapshot restore of a damaged file succeeded, want it refused")
			}
			if _, err := os.Stat(restored); !os.IsNotExist(err) {
				t.Errorf("a refused restore left its data directory: %v", err)
			}
		})
	}
}
