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
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/httpkv/httpkv/internal/etcdtest"
	"github.com/httpkv/httpkv/internal/ssetest"
	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// Tests of streams of many watchers (/v1/watch/streams) shared by the
// gateways of a deployment: created on one, read, resumed, changed and
// deleted through any other, surviving the gateway that made them.

// sharedMsg is one message of a stream of many watchers, as read.
type sharedMsg struct {
	id      string
	kind    string // created, events, progress, compacted, canceled
	watchID int64
	start   int64    // created's start_revision
	reason  string   // canceled's
	events  []string // "key=value@rev"
}

// sharedReader reads GET /v1/watch/streams/{stream} on a gateway until
// its connection ends, keeping every message.
type sharedReader struct {
	mu   sync.Mutex
	msgs []sharedMsg
	err  error
	done chan struct{}
	stop context.CancelFunc
}

// readShared opens stream on s, after cursor unless it is empty.
func readShared(tb testing.TB, s *e2e.Server, stream, cursor string) *sharedReader {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", s.URL+"/v1/watch/streams/"+stream, nil)
	if err != nil {
		tb.Fatal(err)
	}
	if cursor != "" {
		req.Header.Set("Last-Event-ID", cursor)
	}
	resp, err := s.Streams.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		cancel()
		tb.Fatalf("GET /v1/watch/streams/%s (Last-Event-ID %q) = %v, %v", stream, cursor, resp, err)
	}
	r := &sharedReader{done: make(chan struct{}), stop: cancel}
	tb.Cleanup(func() { cancel(); <-r.done })
	go func() {
		defer close(r.done)
		defer resp.Body.Close()
		p := ssetest.NewParser(resp.Body)
		for {
			m, err := p.Next()
			if err == nil && m.HasData {
				err = r.take(m)
			}
			if err != nil {
				r.mu.Lock()
				r.err = err
				r.mu.Unlock()
				return
			}
		}
	}()
	return r
}

func (r *sharedReader) take(m ssetest.Message) error {
	var p struct {
		Type          string              `json:"type"`
		WatchID       int64               `json:"watch_id"`
		StartRevision int64               `json:"start_revision"`
		Reason        string              `json:"reason"`
		Events        []client.WatchEvent `json:"events"`
	}
	if err := json.Unmarshal([]byte(m.Data), &p); err != nil {
		return err
	}
	if !m.HasID || p.WatchID <= 0 {
		return fmt.Errorf("message without an id or a watch_id: %s", m.Raw)
	}
	msg := sharedMsg{id: m.ID, kind: p.Type, watchID: p.WatchID, start: p.StartRevision, reason: p.Reason}
	for _, ev := range p.Events {
		msg.events = append(msg.events, fmt.Sprintf("%s=%s@%d", e2e.KeyOf(&ev.Kv), e2e.ValueOf(&ev.Kv), ev.Kv.ModRevision))
	}
	r.mu.Lock()
	r.msgs = append(r.msgs, msg)
	r.mu.Unlock()
	return nil
}

// until waits until ok holds of the messages so far, and returns them.
func (r *sharedReader) until(tb testing.TB, what string, ok func(msgs []sharedMsg, ended bool) bool) []sharedMsg {
	tb.Helper()
	for deadline := time.Now().Add(e2e.WatchTimeout); ; time.Sleep(10 * time.Millisecond) {
		r.mu.Lock()
		msgs, ended := slices.Clone(r.msgs), r.err != nil
		r.mu.Unlock()
		if ok(msgs, ended) {
			return msgs
		}
		if time.Now().After(deadline) {
			tb.Fatalf("waiting for %s: have %d messages (ended %v)", what, len(msgs), ended)
		}
	}
}

// close ends the reader's connection and returns what it read.
func (r *sharedReader) close() []sharedMsg {
	r.stop()
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.msgs)
}

// lastID is the id of the last message of msgs.
func lastID(msgs []sharedMsg) string {
	if len(msgs) == 0 {
		return ""
	}
	return msgs[len(msgs)-1].id
}

// hasCreated reports whether msgs hold watcher wid's created message.
func hasCreated(msgs []sharedMsg, wid int64) bool {
	return slices.ContainsFunc(msgs, func(m sharedMsg) bool { return m.kind == "created" && m.watchID == wid })
}

// reachedRev reports whether msgs hold an event of watcher wid at rev or later.
func reachedRev(msgs []sharedMsg, wid, rev int64) bool {
	for _, m := range msgs {
		if m.watchID != wid || len(m.events) == 0 {
			continue
		}
		_, at, _ := strings.Cut(m.events[len(m.events)-1], "@")
		if n, _ := strconv.ParseInt(at, 10, 64); n >= rev {
			return true
		}
	}
	return false
}

// createShared makes a stream on s with watches (JSON objects).
func createShared(tb testing.TB, s *e2e.Server, watches ...string) (string, []int64) {
	tb.Helper()
	r := s.Do(tb, "POST", "/v1/watch/streams", []byte(`{"watches":[`+strings.Join(watches, ",")+`]}`))
	if r.Status != http.StatusCreated {
		tb.Fatalf("POST /v1/watch/streams = %d %s", r.Status, r.Body)
	}
	var out client.WatchStreamCreated
	if err := json.Unmarshal(r.Body, &out); err != nil {
		tb.Fatal(err)
	}
	var ids []int64
	for _, w := range out.Watches {
		ids = append(ids, w.WatchId)
	}
	return out.Stream, ids
}

// TestSharedStreamAcrossGateways: a stream made on gateway a is read on
// b; a watcher added through a shows up on b's connection; the client
// then reads on a, which is killed (-9), and resumes on b with the last
// id it had. Every watcher's events, over the three connections, are
// etcd's history of its keys from its start: no gap, no duplicate.
func TestSharedStreamAcrossGateways(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 3)
	a, b := startGateway(t, c, "/gw/"), startGateway(t, c, "/gw/")
	stream, ids := createShared(t, a, `{"key":"s/","prefix":true}`, `{"key":"s/1"}`)
	if !slices.Equal(ids, []int64{1, 2}) {
		t.Fatalf("watch ids %v, want [1 2]", ids)
	}

	var mu sync.Mutex
	var lastRev int64
	n := 0
	write := func(through ...*e2e.Server) {
		for _, s := range through {
			mu.Lock()
			n++
			i := n
			mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			r, err := s.Send(ctx, "PUT", e2e.KeyPath("s/"+strconv.Itoa(i%4)), []byte(strconv.Itoa(i)))
			cancel()
			if err != nil || r.Status != http.StatusOK {
				continue // a is gone
			}
			var res client.PutResponse
			if err := json.Unmarshal(r.Body, &res); err == nil {
				mu.Lock()
				lastRev = max(lastRev, res.Header.Revision)
				mu.Unlock()
			}
		}
	}

	first := readShared(t, b, stream, "")
	first.until(t, "created of watchers 1 and 2 on b", func(m []sharedMsg, _ bool) bool { return hasCreated(m, 1) && hasCreated(m, 2) })
	for range 10 {
		write(a, b)
	}
	r := a.Do(t, "POST", "/v1/watch/streams/"+stream+"/watches", []byte(`{"key":"s/2"}`))
	var added client.WatchAdded
	if r.Status != http.StatusCreated || json.Unmarshal(r.Body, &added) != nil || added.WatchId != 3 {
		t.Fatalf("POST watches through a = %d %s, want 201 watch_id 3", r.Status, r.Body)
	}
	first.until(t, "watcher 3, added through a, on b's connection", func(m []sharedMsg, _ bool) bool { return hasCreated(m, 3) })
	for range 10 {
		write(a, b)
	}
	mu.Lock()
	rev := lastRev
	mu.Unlock()
	first.until(t, "b's connection up to the writes", func(m []sharedMsg, _ bool) bool { return reachedRev(m, 1, rev) })
	got := first.close()

	// The client goes on through a, with the last id b gave it, while
	// writes go on through both; a dies mid-stream.
	second := readShared(t, a, stream, lastID(got))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				write(a, b)
			}
		}
	}()
	second.until(t, "a's connection reading", func(m []sharedMsg, _ bool) bool { return len(m) >= 10 })
	a.Kill()
	onA := second.until(t, "a's connection to end", func(_ []sharedMsg, ended bool) bool { return ended })
	got = append(got, onA...)
	for range 10 {
		write(b)
	}
	close(stop)
	wg.Wait()
	last := b.Put(t, "s/2", "last")

	truth := gatewayHistory(t, c, "/gw/kv/", 1, last)
	// Each watcher catches up on its own: watcher 2's last event may come
	// after the others' last.
	lastS1 := int64(0)
	for _, ev := range truth {
		if k, at, _ := strings.Cut(ev, "@"); strings.HasPrefix(k, "s/1=") {
			lastS1, _ = strconv.ParseInt(at, 10, 64)
		}
	}
	third := readShared(t, b, stream, lastID(got))
	got = append(got, third.until(t, "every watcher up to its last event", func(m []sharedMsg, _ bool) bool {
		all := slices.Concat(got, m)
		return reachedRev(all, 1, last) && reachedRev(all, 2, lastS1) && reachedRev(all, 3, last)
	})...)
	third.close()
	want := map[int64]func(ev string) bool{
		1: func(ev string) bool { return strings.HasPrefix(ev, "s/") },
		2: func(ev string) bool { return strings.HasPrefix(ev, "s/1=") },
		3: func(ev string) bool { return strings.HasPrefix(ev, "s/2=") },
	}
	for wid := int64(1); wid <= 3; wid++ {
		var events []string
		created := 0
		var start int64
		for _, m := range got {
			if m.watchID != wid {
				continue
			}
			switch m.kind {
			case "created":
				created++
				start = m.start
			case "events":
				events = append(events, m.events...)
			default:
				t.Fatalf("watcher %d: unexpected %s (%s)", wid, m.kind, m.reason)
			}
		}
		if created != 1 {
			t.Fatalf("watcher %d: %d created messages, want 1", wid, created)
		}
		var exp []string
		for _, ev := range truth {
			_, at, _ := strings.Cut(ev, "@")
			if r, _ := strconv.ParseInt(at, 10, 64); r >= start && want[wid](ev) {
				exp = append(exp, ev)
			}
		}
		if !slices.Equal(events, exp) {
			t.Fatalf("watcher %d (from %d): %d events, want etcd's %d:\ngot  %q\nwant %q", wid, start, len(events), len(exp), events, exp)
		}
	}
	t.Logf("3 watchers exact over 3 connections on 2 gateways, one killed; %d revisions", last)
}

// TestSharedStreamDeleteExpireIsolate: a stream deleted through b ends
// its connection on a; one nobody reads is gone after the idle timeout,
// from etcd too; a gateway of another namespace can neither see nor
// touch a stream; bad cursors answer 400.
func TestSharedStreamDeleteExpireIsolate(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	idle := []string{"--watch-stream-idle-timeout", "2s"}
	a, b := startGateway(t, c, "/gw/", idle...), startGateway(t, c, "/gw/", idle...)
	other := startGateway(t, c, "/other/", idle...)

	// Deleted through b while a reads it.
	stream, _ := createShared(t, a, `{"key":"d/","prefix":true}`, `{"key":"d/1"}`)
	onA := readShared(t, a, stream, "")
	onA.until(t, "both created", func(m []sharedMsg, _ bool) bool { return hasCreated(m, 1) && hasCreated(m, 2) })
	for _, s := range []*e2e.Server{other} {
		for _, req := range [][2]string{{"GET", ""}, {"POST", "/watches"}, {"DELETE", "/watches/1"}, {"DELETE", ""}} {
			body := []byte(nil)
			if req[0] == "POST" {
				body = []byte(`{"key":"d/"}`)
			}
			if r := s.Do(t, req[0], "/v1/watch/streams/"+stream+req[1], body); r.Status != http.StatusNotFound {
				t.Fatalf("%s %s on another namespace's gateway = %d %s, want 404", req[0], req[1], r.Status, r.Body)
			}
		}
	}
	if r := b.Do(t, "GET", "/v1/kv?key=&prefix=true&keys_only=true", nil); r.Status != http.StatusOK || strings.Contains(string(r.Body), "stream") {
		t.Fatalf("the keys of the deployment = %d %s, want none of the streams' records", r.Status, r.Body)
	}
	// Bad cursors.
	for _, bad := range []string{"x", "1.!!", "1." + strings.Repeat("A", 6000)} {
		r := b.Do(t, "GET", "/v1/watch/streams/"+stream, nil, "Last-Event-ID", bad)
		if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), `"invalid_argument"`) {
			t.Fatalf("GET with Last-Event-ID %.20q = %d %s, want 400 invalid_argument", bad, r.Status, r.Body)
		}
	}
	if r := b.Do(t, "DELETE", "/v1/watch/streams/"+stream+"/watches/2", nil); r.Status != http.StatusOK {
		t.Fatalf("DELETE watcher 2 through b = %d %s", r.Status, r.Body)
	}
	onA.until(t, "watcher 2 canceled on a", func(m []sharedMsg, _ bool) bool {
		return slices.ContainsFunc(m, func(m sharedMsg) bool { return m.kind == "canceled" && m.watchID == 2 && m.reason == "watch deleted" })
	})
	if r := b.Do(t, "DELETE", "/v1/watch/streams/"+stream, nil); r.Status != http.StatusOK {
		t.Fatalf("DELETE through b = %d %s", r.Status, r.Body)
	}
	msgs := onA.until(t, "a's connection to end", func(_ []sharedMsg, ended bool) bool { return ended })
	if !slices.ContainsFunc(msgs, func(m sharedMsg) bool { return m.kind == "canceled" && m.watchID == 1 && m.reason == "stream deleted" }) {
		t.Fatalf("a's connection ended without canceled (stream deleted) for watcher 1: %v", msgs)
	}
	for _, s := range []*e2e.Server{a, b} {
		if r := s.Do(t, "GET", "/v1/watch/streams/"+stream, nil); r.Status != http.StatusNotFound || !strings.Contains(string(r.Body), "stream_not_found") {
			t.Fatalf("GET of a deleted stream = %d %s, want 404 stream_not_found", r.Status, r.Body)
		}
	}

	// Read on a for a while, then left: gone from etcd after the idle
	// timeout, for every gateway.
	stream, _ = createShared(t, b, `{"key":"e/"}`)
	left := readShared(t, a, stream, "")
	left.until(t, "created", func(m []sharedMsg, _ bool) bool { return hasCreated(m, 1) })
	left.close()
	cli := c.Client(t)
	for deadline := time.Now().Add(e2e.WatchTimeout); ; time.Sleep(50 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		resp, err := cli.Get(ctx, "/gw/streams/", clientv3.WithPrefix(), clientv3.WithCountOnly())
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if resp.Count == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d stream records left in etcd after the idle timeout", resp.Count)
		}
	}
	for _, s := range []*e2e.Server{a, b} {
		if r := s.Do(t, "GET", "/v1/watch/streams/"+stream, nil, "Last-Event-ID", "1"); r.Status != http.StatusNotFound {
			t.Fatalf("GET of an expired stream = %d %s, want 404", r.Status, r.Body)
		}
	}
}

// TestSharedStreamTakeOverAndBounds: a connection on one gateway takes
// a stream over from one on another, which ends; the bounds of watchers
// per stream and streams per client hold across gateways, counted in
// etcd.
func TestSharedStreamTakeOverAndBounds(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	bounds := []string{"--max-watchers-per-stream", "2", "--max-watch-streams-per-user", "2"}
	a, b := startGateway(t, c, "/gw/", bounds...), startGateway(t, c, "/gw/", bounds...)

	stream, _ := createShared(t, a, `{"key":"t/1"}`)
	onA := readShared(t, a, stream, "")
	msgs := onA.until(t, "created", func(m []sharedMsg, _ bool) bool { return hasCreated(m, 1) })
	onB := readShared(t, b, stream, lastID(msgs))
	onA.until(t, "a's connection to end once b's took the stream over", func(_ []sharedMsg, ended bool) bool { return ended })
	rev := b.Put(t, "t/1", "v")
	onB.until(t, "the put on b's connection", func(m []sharedMsg, _ bool) bool { return reachedRev(m, 1, rev) })

	// Watchers: one more through b, then none through a.
	if r := b.Do(t, "POST", "/v1/watch/streams/"+stream+"/watches", []byte(`{"key":"t/2"}`)); r.Status != http.StatusCreated {
		t.Fatalf("second watcher through b = %d %s", r.Status, r.Body)
	}
	if r := a.Do(t, "POST", "/v1/watch/streams/"+stream+"/watches", []byte(`{"key":"t/3"}`)); r.Status != http.StatusTooManyRequests {
		t.Fatalf("third watcher through a = %d %s, want 429", r.Status, r.Body)
	}
	// Streams: a second through b, then none through a.
	createShared(t, b, `{"key":"t/4"}`)
	if r := a.Do(t, "POST", "/v1/watch/streams", []byte(`{"watches":[]}`)); r.Status != http.StatusTooManyRequests {
		t.Fatalf("a third stream of one client through a = %d %s, want 429", r.Status, r.Body)
	}
}

// TestSharedStreamWatchIDs: watchers added at once through two gateways
// get watch IDs that are all distinct, one after another.
func TestSharedStreamWatchIDs(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	a, b := startGateway(t, c, "/gw/"), startGateway(t, c, "/gw/")
	stream, _ := createShared(t, a, `{"key":"w/0"}`)
	const n = 20
	ids := make([]int64, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := []*e2e.Server{a, b}[i%2]
			ctx, cancel := context.WithTimeout(context.Background(), e2e.WatchTimeout)
			defer cancel()
			r, err := s.Send(ctx, "POST", "/v1/watch/streams/"+stream+"/watches", []byte(`{"key":"w/`+strconv.Itoa(i+1)+`"}`))
			var added client.WatchAdded
			if err != nil || r.Status != http.StatusCreated || json.Unmarshal(r.Body, &added) != nil {
				t.Errorf("POST watches = %v, %v", r, err)
				return
			}
			ids[i] = added.WatchId
		}()
	}
	wg.Wait()
	slices.Sort(ids)
	for i, id := range ids {
		if id != int64(i)+2 {
			t.Fatalf("watch ids %v, want 2 to %d each once", ids, n+1)
		}
	}
}
