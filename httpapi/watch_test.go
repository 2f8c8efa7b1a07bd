package httpapi

import (
	"cmp"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/httpkv/httpkv/backend/embedded"
	"github.com/httpkv/httpkv/internal/waittest"
	"github.com/httpkv/httpkv/internal/wiretest"
)

// streamTimeout bounds every wait for a watch message. A message that is
// written but not flushed would wait for the next keep-alive, which the
// tests set far beyond it.
const streamTimeout = 10 * time.Second

// newWatchServer serves the real handler over a real connection, with
// keep-alives out of the way.
func newWatchServer(tb testing.TB) (*Handler, *embedded.Backend, *httptest.Server, *http.Client) {
	tb.Helper()
	h, store := newTestHandler(tb, Config{KeepAliveInterval: time.Hour})
	srv := httptest.NewServer(h)
	tr := &http.Transport{}
	tb.Cleanup(func() {
		tr.CloseIdleConnections()
		srv.Close()
	})
	return h, store, srv, &http.Client{Transport: tr}
}

// decodeWatchData decodes a watch message's data into T, the declared
// type of its kind, after checking that the data names the kind first.
func decodeWatchData[T any](tb testing.TB, m sseMessage) T {
	tb.Helper()
	// The data says what the message is, without the event line.
	if want := cmp.Or(m.Event, "events"); !strings.HasPrefix(m.Data, `{"type":"`+want+`"`) {
		tb.Fatalf("watch message %q: want data with type %q first", m.Raw, want)
	}
	return wiretest.Decode[T](tb, "watch message "+m.Raw, []byte(m.Data))
}

// expectCreated reads the created message and returns its start revision.
func expectCreated(tb testing.TB, s *sseReader) int64 {
	tb.Helper()
	m := s.next(tb, streamTimeout)
	if m.Event != "created" {
		tb.Fatalf("first watch message %q, want event: created", m.Raw)
	}
	return decodeWatchData[watchCreatedDoc](tb, m).StartRevision
}

// expectPuts reads one data message and checks it holds puts of keys, in
// order, at one revision, carried as the message's id.
func expectPuts(tb testing.TB, s *sseReader, keys ...string) int64 {
	tb.Helper()
	m := s.next(tb, streamTimeout)
	d := decodeWatchData[watchEventsDoc](tb, m)
	if m.Event != "" || !m.HasID || m.ID != strconv.FormatInt(d.Header.Revision, 10) {
		tb.Fatalf("watch message %q: want a default-type message whose id is its revision", m.Raw)
	}
	if len(d.Events) != len(keys) {
		tb.Fatalf("watch message %q: %d events, want %d (%q)", m.Raw, len(d.Events), len(keys), keys)
	}
	for i, ev := range d.Events {
		if ev.Type != "put" || wiretest.Key(ev.KV) != keys[i] || ev.KV.ModRevision != d.Header.Revision {
			tb.Fatalf("watch message %q: event %d, want a put of %q at revision %d", m.Raw, i, keys[i], d.Header.Revision)
		}
	}
	return d.Header.Revision
}

func TestWatchFraming(t *testing.T) {
	h, _, srv, client := newWatchServer(t)
	rec := mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/k0", "v")
	rev0, _ := strconv.ParseInt(rec.Header().Get("X-Revision"), 10, 64)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/v1/watch?key=k&prefix=true", nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	for name, want := range map[string]string{
		"Content-Type":  "text/event-stream; charset=utf-8",
		"Cache-Control": "no-cache",
		"X-Revision":    strconv.FormatInt(rev0, 10),
	} {
		if got := resp.Header.Get(name); got != want {
			t.Errorf("GET /v1/watch: %s %q, want %q", name, got, want)
		}
	}
	s := newSSEReader(resp.Body)
	select {
	case first := <-s.msgs:
		if !first.HasRetry || first.Retry != 1000 || first.HasData {
			t.Errorf("first block %q, want retry: 1000 alone", first.Raw)
		}
	case <-time.After(streamTimeout):
		t.Fatalf("no retry block within %v", streamTimeout)
	}
	if start := expectCreated(t, s); start != rev0+1 {
		t.Errorf("created start_revision %d, want %d", start, rev0+1)
	}
}

// TestWatchSingleEventFlushed checks that a lone event reaches a client
// over a real connection without waiting for anything else.
func TestWatchSingleEventFlushed(t *testing.T) {
	h, _, srv, client := newWatchServer(t)
	s := openWatch(t, client, srv, "/v1/watch?key=k&prefix=true")
	expectCreated(t, s)
	for i := range 3 {
		key := "k" + strconv.Itoa(i)
		mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/"+key, "v")
		expectPuts(t, s, key)
	}
}

// TestWatchFramingOfAwkwardBytes checks that keys and values holding line
// breaks, JavaScript line separators and invalid UTF-8 stay on one data
// line and come back intact.
func TestWatchFramingOfAwkwardBytes(t *testing.T) {
	h, _, srv, client := newWatchServer(t)
	s := openWatch(t, client, srv, "/v1/watch?key=k&prefix=true")
	expectCreated(t, s)
	values := []string{"a\nb", "a\r\nb", "\n\ndata: x\n\n", "a\u2028b\u2029", "\xff\xfe", "id: 1\r"}
	for i, v := range values {
		key := "k" + strconv.Itoa(i) + "\n\xff"
		mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/"+url.PathEscape(key), v)
		m := s.next(t, streamTimeout)
		if strings.Count(m.Raw, "\n") != 3 || strings.Contains(m.Raw, "\r") {
			t.Errorf("message for value %q = %q, want id, data and a blank line, no CR", v, m.Raw)
		}
		d := decodeWatchData[watchEventsDoc](t, m)
		if len(d.Events) != 1 || wiretest.Key(d.Events[0].KV) != key || wiretest.Value(d.Events[0].KV) != v {
			t.Errorf("message %q, want a put of %q = %q", m.Raw, key, v)
		}
	}
}

// TestWatchTxnOneMessage checks that the events of one revision arrive as
// one message, in the txn's order, and that a revision touching keys
// outside the watch carries only the matching ones.
func TestWatchTxnOneMessage(t *testing.T) {
	h, _, srv, client := newWatchServer(t)
	s := openWatch(t, client, srv, "/v1/watch?key=k&prefix=true")
	expectCreated(t, s)
	body := `{"success":[
		{"put":{"key":"k3","value":"c"}},
		{"put":{"key":"other","value":"x"}},
		{"put":{"key":"k1","value":"a"}},
		{"put":{"key":"k2","value":"b"}}]}`
	rec := mustServe(t, h, http.StatusOK, "POST", "/v1/txn", body)
	rev, _ := strconv.ParseInt(rec.Header().Get("X-Revision"), 10, 64)
	got := expectPuts(t, s, "k3", "k1", "k2")
	if got != rev {
		t.Errorf("txn message at revision %d, want the txn's %d", got, rev)
	}
	// A second burst right after: its own message.
	mustServe(t, h, http.StatusOK, "POST", "/v1/txn", `{"success":[{"put":{"key":"k4","value":"d"}},{"delete":{"key":"k1"}}]}`)
	m := s.next(t, streamTimeout)
	d := decodeWatchData[watchEventsDoc](t, m)
	if len(d.Events) != 2 || d.Events[0].Type != "put" || d.Events[1].Type != "delete" || wiretest.Key(d.Events[1].KV) != "k1" {
		t.Errorf("second txn message %q, want put k4 then delete k1", m.Raw)
	}
}

// TestWatchLastEventIDResume reconnects as a browser does, with the id of
// the last message seen, and must get exactly what followed.
func TestWatchLastEventIDResume(t *testing.T) {
	h, _, srv, client := newWatchServer(t)
	var revs []int64
	for i := range 5 {
		rec := mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/k"+strconv.Itoa(i), "v")
		rev, _ := strconv.ParseInt(rec.Header().Get("X-Revision"), 10, 64)
		revs = append(revs, rev)
	}
	s := openWatch(t, client, srv, "/v1/watch?key=k&prefix=true&start_revision=1",
		"Last-Event-ID", strconv.FormatInt(revs[2], 10))
	if start := expectCreated(t, s); start != revs[2]+1 {
		t.Errorf("created start_revision %d after Last-Event-ID %d, want %d", start, revs[2], revs[2]+1)
	}
	expectPuts(t, s, "k3")
	expectPuts(t, s, "k4")

	rec := serve(t, h, "GET", "/v1/watch?key=k", "", "Last-Event-ID", "abc")
	if rec.Code != http.StatusBadRequest || errorCode(t, rec) != "invalid_argument" {
		t.Errorf("GET /v1/watch with Last-Event-ID abc = %d %s, want 400 invalid_argument", rec.Code, rec.Body)
	}
}

// TestWatchCompactedInBand checks that a resume below the compact
// revision is told so in the stream, which then ends.
func TestWatchCompactedInBand(t *testing.T) {
	h, _, srv, client := newWatchServer(t)
	for i := range 4 {
		mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/k"+strconv.Itoa(i), "v")
	}
	mustServe(t, h, http.StatusOK, "POST", "/v1/compact", `{"revision":4,"physical":true}`)
	s := openWatch(t, client, srv, "/v1/watch?key=k&prefix=true", "Last-Event-ID", "2")
	expectCreated(t, s)
	// The retry field may come in a block of its own: a client applies it
	// as it reads it.
	var compacted sseMessage
	retry := int64(-1)
	for compacted.Event == "" {
		select {
		case compacted = <-s.msgs:
			if compacted.HasRetry {
				retry = compacted.Retry
			}
		case <-time.After(streamTimeout):
			t.Fatalf("no event: compacted within %v", streamTimeout)
		}
	}
	d := decodeWatchData[watchCompactedDoc](t, compacted)
	if compacted.Event != "compacted" || retry != 60000 || d.CompactRevision != 4 {
		t.Errorf("message %q after retry %d, want event: compacted with compact_revision 4 after retry: 60000", compacted.Raw, retry)
	}
	select {
	case <-s.done:
	case <-time.After(streamTimeout):
		t.Errorf("the stream did not end after event: compacted")
	}
}

// TestWatchDisconnectCleanup opens many streams, drops their clients, and
// checks that every watcher and every goroutine they took is released.
func TestWatchDisconnectCleanup(t *testing.T) {
	const streams = 20
	h, store, srv, client := newWatchServer(t)
	// The goroutine that notices clients hanging up lives as long as the
	// handler, from the first stream that takes its connection over.
	h.streams.StartHangups()
	baseline := runtime.NumGoroutine()

	cancels := make([]context.CancelFunc, 0, streams)
	readers := make([]*sseReader, 0, streams)
	for i := range streams {
		ctx, cancel := context.WithCancel(context.Background())
		cancels = append(cancels, cancel)
		target := "/v1/watch?key=k&prefix=true"
		if i%2 == 1 {
			target = "/v1/watch?key=k" + strconv.Itoa(i) + "&prev_kv=true&start_revision=1"
		}
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+target, nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", target, err)
		}
		defer resp.Body.Close()
		s := newSSEReader(resp.Body)
		expectCreated(t, s)
		readers = append(readers, s)
	}
	mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/k1", "v")
	total := func() int {
		st := store.Stats().Watchers
		return st.Synced + st.Unsynced + st.Victims
	}
	if !waittest.For(streamTimeout, func() bool { return total() == streams }) {
		t.Fatalf("watch store has %+v watchers with %d streams open, want %d", store.Stats().Watchers, streams, streams)
	}

	for _, cancel := range cancels {
		cancel()
	}
	for _, s := range readers {
		select {
		case <-s.done:
		case <-time.After(streamTimeout):
			t.Fatalf("a canceled client's stream did not end")
		}
	}
	if !waittest.For(streamTimeout, func() bool { return total() == 0 }) {
		t.Fatalf("watch store has %+v watchers %v after every client left, want none", store.Stats().Watchers, streamTimeout)
	}
	var n int
	ok := waittest.For(streamTimeout, func() bool {
		client.CloseIdleConnections()
		n = runtime.NumGoroutine()
		return n <= baseline
	})
	if !ok {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		t.Fatalf("%d goroutines %v after every client left, want at most the %d before:\n%s", n, streamTimeout, baseline, buf)
	}
	if st := store.Stats().Watchers; st.PendingEvents != 0 {
		t.Errorf("watch store holds %d pending events after every client left, want 0", st.PendingEvents)
	}
}

// FuzzLastEventID drives the watch handler with arbitrary Last-Event-ID
// headers: a revision R resumes at R+1, anything else is a 400.
func FuzzLastEventID(f *testing.F) {
	h, _ := newTestHandler(f, Config{KeepAliveInterval: time.Hour})
	mustServe(f, h, http.StatusOK, "PUT", "/v1/kv/k", "v")
	for _, s := range []string{"", "0", "1", "2", " 5 ", "+7", "-1", "abc", "1e3", "9223372036854775806",
		"9223372036854775807", "9223372036854775808", "0x10", "１", "1\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // the handler answers its first lines and returns
		req := httptest.NewRequestWithContext(ctx, "GET", "/v1/watch?key=k&prefix=true&start_revision=1", nil)
		req.Header.Set("Last-Event-ID", id)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)

		trimmed := strings.TrimSpace(id)
		n, err := strconv.ParseInt(trimmed, 10, 64)
		valid := trimmed == "" || err == nil && n >= 0 && n < 1<<63-1
		switch {
		case !valid:
			if rec.Code != http.StatusBadRequest || errorCode(t, rec) != "invalid_argument" {
				t.Fatalf("Last-Event-ID %q = %d %s, want 400 invalid_argument", id, rec.Code, rec.Body)
			}
			return
		case rec.Code != http.StatusOK:
			t.Fatalf("Last-Event-ID %q = %d %s, want 200", id, rec.Code, rec.Body)
		}
		want := int64(1)
		if trimmed != "" {
			want = n + 1
		}
		s := newSSEReader(strings.NewReader(rec.Body.String()))
		if start := expectCreated(t, s); start != want {
			t.Fatalf("Last-Event-ID %q: start_revision %d, want %d", id, start, want)
		}
	})
}
