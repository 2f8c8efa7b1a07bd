package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/httpkv/httpkv/internal/etcdtest"
	"github.com/httpkv/httpkv/internal/ssetest"
	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// Tests of gateways to an etcd cluster as a deployment runs them: more
// than one in front of one cluster. They start their own cluster, with
// either backend under test.

// startGateway starts httpkv as a gateway to c under namespace ns.
func startGateway(tb testing.TB, c *etcdtest.Cluster, ns string, extraArgs ...string) *e2e.Server {
	tb.Helper()
	backend := []string{"--backend", "etcd", "--etcd-endpoints", strings.Join(c.Endpoints(), ","), "--etcd-namespace", ns}
	return e2e.StartServerWith(tb, tb.TempDir(), backend, extraArgs...)
}

// sseWatch is a watch read by a goroutine of its own until its
// connection breaks, keeping the events and the last id it saw; unlike
// e2e.WatchStream it takes a broken connection as the end, as a browser does,
// dropping a block cut short.
type sseWatch struct {
	mu     sync.Mutex
	events []string // "key=value@rev"
	lastID int64
	err    error // why the stream ended
	done   chan struct{}
	cancel context.CancelFunc
}

// openSSE opens GET /v1/watch?query on s, resuming after lastID when it
// is not zero.
func openSSE(tb testing.TB, s *e2e.Server, query string, lastID int64) *sseWatch {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", s.URL+"/v1/watch?"+query, nil)
	if err != nil {
		tb.Fatal(err)
	}
	if lastID != 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(lastID, 10))
	}
	resp, err := s.Streams.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		cancel()
		tb.Fatalf("GET /v1/watch?%s (Last-Event-ID %d) = %v, %v", query, lastID, resp, err)
	}
	w := &sseWatch{lastID: lastID, done: make(chan struct{}), cancel: cancel}
	tb.Cleanup(func() { cancel(); <-w.done })
	go func() {
		defer close(w.done)
		defer resp.Body.Close()
		p := ssetest.NewParser(resp.Body)
		for {
			m, err := p.Next()
			if err != nil {
				w.mu.Lock()
				w.err = err
				w.mu.Unlock()
				return
			}
			w.take(m)
		}
	}()
	return w
}

// take records a message: events ("key=value@rev", a delete's value
// empty), and the id of a data message or a
// bookmark (created, progress).
func (w *sseWatch) take(m ssetest.Message) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !m.HasData || m.Event != "" && m.Event != "progress" && m.Event != "created" {
		return // the retry block; compacted and canceled do not come here
	}
	if m.Event == "" {
		var msg client.WatchEvents
		if err := json.Unmarshal([]byte(m.Data), &msg); err != nil {
			w.err = err
			return
		}
		for _, ev := range msg.Events {
			w.events = append(w.events, fmt.Sprintf("%s=%s@%d", e2e.KeyOf(&ev.Kv), e2e.ValueOf(&ev.Kv), ev.Kv.ModRevision))
		}
	}
	if id, err := strconv.ParseInt(m.ID, 10, 64); err == nil {
		w.lastID = id
	}
}

// upTo waits until the watch has delivered revision rev, or until its
// stream has ended when ended is set; it returns what the watch has.
func (w *sseWatch) upTo(tb testing.TB, name string, rev int64, ended bool) ([]string, int64) {
	tb.Helper()
	for deadline := time.Now().Add(e2e.WatchTimeout); ; time.Sleep(10 * time.Millisecond) {
		w.mu.Lock()
		events, last, err := slices.Clone(w.events), w.lastID, w.err
		w.mu.Unlock()
		if ended && err != nil || !ended && last >= rev {
			return events, last
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s: at id %d (%v), want revision %d or the end (%v)", name, last, err, rev, ended)
		}
	}
}

// TestGatewayKilled runs two gateways in front of one cluster. Clients
// write through both and watch through the first, which is killed with
// SIGKILL in the middle: writers go on through the second, and every
// watcher resumes there with Last-Event-ID. Nothing acknowledged is lost,
// and every watcher has exactly etcd's history of its keys, with no gap
// and no duplicate across the resume.
func TestGatewayKilled(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 3)
	a, b := startGateway(t, c, "/gw/"), startGateway(t, c, "/gw/")
	start := a.Status(t).Revision + 1
	const watchers = 20
	var ws []*sseWatch
	for i := range watchers {
		query := "key=k/&prefix=true"
		if i%2 == 1 {
			query = "key=k/1&start_revision=" + strconv.FormatInt(start, 10)
		}
		ws = append(ws, openSSE(t, a, query, 0))
	}

	// Writers: through both gateways, then, once a is gone, through b.
	var mu sync.Mutex
	acked := map[int64]string{}
	write := func(i int, through *e2e.Server) bool {
		key, value := "k/"+strconv.Itoa(i%10), strconv.Itoa(i)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r, err := through.Send(ctx, "PUT", e2e.KeyPath(key), []byte(value))
		if err != nil || r.Status != http.StatusOK {
			return false
		}
		var res client.PutResponse
		if err := json.Unmarshal(r.Body, &res); err != nil {
			return false
		}
		mu.Lock()
		acked[res.Header.Revision] = key + "=" + value
		mu.Unlock()
		return true
	}
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < 400; i += 2 {
				through := []*e2e.Server{a, b}[i%2]
				for !write(i, through) {
					through = b // a is gone: go on through b
				}
			}
		}()
	}
	for {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 150 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	a.Kill()
	wg.Wait()
	last := b.Put(t, "k/0", "last")

	truth := gatewayHistory(t, c, "/gw/kv/", start, last)
	for rev, kv := range acked {
		if !slices.Contains(truth, fmt.Sprintf("k/%s@%d", kv[len("k/"):], rev)) {
			t.Errorf("PUT %s acknowledged at revision %d is not in etcd's history", kv, rev)
		}
	}
	for i, w := range ws {
		want := truth
		if i%2 == 1 {
			want = slices.DeleteFunc(slices.Clone(truth), func(e string) bool { return !strings.HasPrefix(e, "k/1=") })
		}
		_, revText, _ := strings.Cut(want[len(want)-1], "@")
		wantLast, _ := strconv.ParseInt(revText, 10, 64)
		before, lastID := w.upTo(t, fmt.Sprintf("watcher %d on the killed gateway", i), wantLast, true)
		resumed := openSSE(t, b, []string{"key=k/&prefix=true", "key=k/1"}[i%2], lastID)
		after, _ := resumed.upTo(t, fmt.Sprintf("watcher %d resumed", i), wantLast, false)
		got := append(before, after...)
		if !slices.Equal(got, want) {
			t.Fatalf("watcher %d got %d events (%d before the kill, resumed after %d), want etcd's %d:\ngot  %q\nwant %q",
				i, len(got), len(before), lastID, len(want), got, want)
		}
	}
	t.Logf("%d puts acknowledged through two gateways, one killed; %d watchers resumed on the other", len(acked), watchers)
}

// gatewayHistory reads the puts under prefix at revisions from to to from
// etcd directly, as "key=value@rev" without the prefix.
func gatewayHistory(tb testing.TB, c *etcdtest.Cluster, prefix string, from, to int64) []string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e2e.WatchTimeout)
	defer cancel()
	var out []string
	for resp := range c.Client(tb).Watch(ctx, prefix, clientv3.WithPrefix(), clientv3.WithRev(from)) {
		if err := resp.Err(); err != nil {
			tb.Fatalf("etcd's history from %d: %v", from, err)
		}
		for _, ev := range resp.Events {
			out = append(out, fmt.Sprintf("%s=%s@%d", ev.Kv.Key[len(prefix):], ev.Kv.Value, ev.Kv.ModRevision))
			if ev.Kv.ModRevision >= to {
				return out
			}
		}
	}
	tb.Fatalf("etcd's history from %d ended before %d", from, to)
	return nil
}

// TestGatewaysShareAuth: users, roles and tokens are the deployment's,
// not a gateway's. Auth enabled through one gateway is on at the other;
// a token issued by one works on the other; and a permission revoked
// through one ends a watch that uses it on the other, as soon as the
// other's watch of the auth state tells it (the delay is logged).
func TestGatewaysShareAuth(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 3)
	a, b := startGateway(t, c, "/auth/", e2e.AuthBcryptCost), startGateway(t, c, "/auth/", e2e.AuthBcryptCost)
	e2e.EnableAuth(t, a, "rootpw")
	root := e2e.AuthCaller{Name: "root", Token: e2e.AuthLogin(t, a, "root", "rootpw")}
	e2e.AuthDo(t, a, root, http.StatusCreated, "POST", "/v1/auth/roles", `{"name":"app"}`)
	e2e.AuthDo(t, a, root, http.StatusOK, "POST", "/v1/auth/roles/app/permissions", `{"key":"app/","prefix":true,"type":"readwrite"}`)
	e2e.AuthDo(t, a, root, http.StatusCreated, "POST", "/v1/auth/users", `{"name":"alice","password":"alicepw"}`)
	e2e.AuthDo(t, a, root, http.StatusOK, "PUT", "/v1/auth/users/alice/roles/app", "")

	// b refuses a request without a token, and takes a's tokens.
	e2e.WantRefused(t, b.Do(t, "GET", "/v1/kv/app/x", nil), true)
	alice := e2e.AuthCaller{Name: "alice", Token: e2e.AuthLogin(t, a, "alice", "alicepw")}
	b.Do(t, "PUT", e2e.KeyPath("app/x"), []byte("v"), alice.Header()...).Want(t, http.StatusOK)
	e2e.WantRefused(t, b.Do(t, "PUT", e2e.KeyPath("other"), []byte("v"), alice.Header()...), false)

	w := e2e.OpenWatch(t, b, "key=app/&prefix=true", alice.Header()...)
	start := time.Now()
	e2e.AuthDo(t, a, root, http.StatusOK, "DELETE", "/v1/auth/users/alice/roles/app", "")
	e2e.WantCanceled(t, w, "permission denied", e2e.WatchTimeout)
	t.Logf("the watch on b ended %v after the role was revoked through a", time.Since(start))
	e2e.WantRefused(t, b.Do(t, "GET", "/v1/kv/app/x", nil, alice.Header()...), false)
}

// TestGatewayWithoutQuorum: while two of three members are down, the
// gateway answers writes, reads and /health with a clean 503 and
// Retry-After; once they are back, it serves again, nothing acknowledged
// before is lost, and a watch opened before the outage goes on where it
// was, with no gap.
func TestGatewayWithoutQuorum(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 3)
	s := startGateway(t, c, "/q/", "--etcd-request-timeout=2s")
	before := s.Put(t, "k", "before")
	w := openSSE(t, s, "key=k", 0)
	down := []int{c.Leader()}
	down = append(down, (down[0]+1)%c.Size())
	for _, i := range down {
		c.Kill(i)
	}
	for _, req := range []struct{ method, path, body string }{
		{"PUT", "/v1/kv/k", "during"},
		{"GET", "/v1/kv/k", ""},
		{"GET", "/health", ""},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), e2e.RequestTimeout)
		r, err := s.Send(ctx, req.method, req.path, []byte(req.body))
		cancel()
		if err != nil {
			t.Fatalf("%s %s without a quorum: %v", req.method, req.path, err)
		}
		if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" && req.path != "/health" {
			t.Errorf("%s %s without a quorum = %d (Retry-After %q) %s, want 503 with Retry-After",
				req.method, req.path, r.Status, r.Header.Get("Retry-After"), r.Body)
		}
	}
	for _, i := range down {
		c.Restart(i)
	}
	var after int64
	for deadline := time.Now().Add(e2e.WatchTimeout); ; time.Sleep(50 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), e2e.RequestTimeout)
		r, err := s.Send(ctx, "PUT", "/v1/kv/k", []byte("after"))
		cancel()
		if err == nil && r.Status == http.StatusOK {
			var res client.PutResponse
			if err := json.Unmarshal(r.Body, &res); err != nil {
				t.Fatal(err)
			}
			after = res.Header.Revision
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("PUT after the members came back: %v %v", r, err)
		}
	}
	got, _ := w.upTo(t, "the watch opened before the outage", after, false)
	truth := gatewayHistory(t, c, "/q/kv/", before+1, after)
	if !slices.Equal(got, truth) {
		t.Fatalf("the watch got %q across the outage, want etcd's %q", got, truth)
	}
	if kv := s.Get(t, "k"); e2e.ValueOf(&kv) != "after" {
		t.Fatalf("k = %s after the outage, want after", e2e.KVString(&kv))
	}
}

// TestWatchStreamOfRecreatedUser: a stream belongs to the user who made
// it, not to her name. Root deletes alice and creates another alice
// through gateway a while gateway b, which holds the first alice's
// stream, is stopped (SIGSTOP): b's first load of the auth state after
// has the new alice in it, and b never sees alice missing. The new alice
// must still not reach the first one's stream on b.
func TestWatchStreamOfRecreatedUser(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	a, b := startGateway(t, c, "/recreated/", e2e.AuthBcryptCost), startGateway(t, c, "/recreated/", e2e.AuthBcryptCost)
	e2e.EnableAuth(t, a, "rootpw")
	root := e2e.AuthCaller{Name: "root", Token: e2e.AuthLogin(t, a, "root", "rootpw")}
	e2e.AuthDo(t, a, root, http.StatusCreated, "POST", "/v1/auth/roles", `{"name":"app"}`)
	e2e.AuthDo(t, a, root, http.StatusOK, "POST", "/v1/auth/roles/app/permissions", `{"key":"app/","prefix":true,"type":"read"}`)
	e2e.AuthDo(t, a, root, http.StatusCreated, "POST", "/v1/auth/users", `{"name":"alice","password":"alicepw"}`)
	e2e.AuthDo(t, a, root, http.StatusOK, "PUT", "/v1/auth/users/alice/roles/app", "")
	first := e2e.AuthCaller{Name: "alice", Token: e2e.AuthLogin(t, a, "alice", "alicepw")}
	stream, _ := b.CreateStream(t, `{"watches":[{"key":"app/","prefix":true}]}`, first.Header()...)

	pid := b.Cmd.Process.Pid
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	cont := func() { _ = syscall.Kill(pid, syscall.SIGCONT) }
	t.Cleanup(cont)
	e2e.AuthDo(t, a, root, http.StatusOK, "DELETE", "/v1/auth/users/alice", "")
	e2e.AuthDo(t, a, root, http.StatusCreated, "POST", "/v1/auth/users", `{"name":"alice","password":"otherpw"}`)
	e2e.AuthDo(t, a, root, http.StatusOK, "PUT", "/v1/auth/users/alice/roles/app", "")
	cont()

	second := e2e.AuthCaller{Name: "alice", Token: e2e.AuthLogin(t, a, "alice", "otherpw")}
	// b reads a token a issued for a change b may not have loaded yet.
	if r := b.Do(t, "GET", e2e.KeyPath("app/x"), nil, second.Header()...); r.Status != http.StatusNotFound {
		t.Fatalf("GET app/x on b with the new alice's token from a: %d %s, want 404", r.Status, r.Body)
	}
	b.Do(t, "POST", "/v1/watch/streams/"+stream+"/watches", []byte(`{"key":"app/a"}`), second.Header("Content-Type", "application/json")...).
		WantError(t, http.StatusNotFound, "stream_not_found")
	b.Do(t, "DELETE", "/v1/watch/streams/"+stream, nil, second.Header()...).WantError(t, http.StatusNotFound, "stream_not_found")
}
