package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/httpkv/httpkv/backend/embedded"
	"github.com/httpkv/httpkv/kv"

	"github.com/httpkv/httpkv/wire"
)

// TestDeliveryLogCheck: how cursors resolve against the log. Messages 1
// to 3 were folded (confirmed, or old), 4 and 5 taken back when a client
// resumed after 3, and 6 to 9 issued since, 6 to 8 of them written.
func TestDeliveryLogCheck(t *testing.T) {
	l := deliveryLog{folded: 3, first: 6, written: 8, issued: 9}
	for i := 6; i <= 9; i++ {
		l.entries = append(l.entries, logEntry{})
	}
	for _, tt := range []struct {
		cursor int64
		want   cursorState
	}{
		{0, cursorTooOld},
		{2, cursorTooOld},
		{3, cursorOK},      // the fold point
		{4, cursorTooOld},  // taken back
		{5, cursorTooOld},  // taken back
		{6, cursorOK},      // written
		{8, cursorOK},      // the last written
		{9, cursorUnknown}, // issued, never written
		{1000, cursorUnknown},
	} {
		if got := l.check(tt.cursor); got != tt.want {
			t.Errorf("check(%d) with folded 3, first 6, written 8 = %d, want %d", tt.cursor, got, tt.want)
		}
	}
	fresh := deliveryLog{first: 1}
	if got := fresh.check(0); got != cursorOK {
		t.Errorf("check(0) of a fresh log = %d, want OK", got)
	}
}

// TestWatchStreamExpiry: a stream is dropped once it has had no
// connection for IdleTimeout: never read, or no longer; while read it
// stays.
func TestWatchStreamExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := openTestBackend(t, embedded.Options{})
		reg := newStreamRegistry(WatchStreamConfig{IdleTimeout: time.Minute}, b, allowAll{})
		defer reg.close()
		never, _ := reg.create(streamOwner{}, "test", nil)
		read, _ := reg.create(streamOwner{}, "test", nil)
		c, err := read.attach(0, false)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute - time.Second)
		synctest.Wait()
		if reg.get(never.id) == nil {
			t.Fatal("a stream never read was dropped before IdleTimeout")
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if reg.get(never.id) != nil {
			t.Fatal("a stream never read is there after IdleTimeout")
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		if reg.get(read.id) == nil {
			t.Fatal("a stream being read was dropped")
		}
		read.detach(c)
		// A reconnect within the timeout starts it again.
		time.Sleep(time.Minute - time.Second)
		c, err = read.attach(0, false)
		if err != nil {
			t.Fatal(err)
		}
		read.detach(c)
		time.Sleep(time.Minute - time.Second)
		synctest.Wait()
		if reg.get(read.id) == nil {
			t.Fatal("a stream was dropped less than IdleTimeout after its last connection")
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if reg.get(read.id) != nil || reg.len() != 0 {
			t.Fatal("a stream left without a connection is there after IdleTimeout")
		}
	})
}

// TestWatchStreamBadInput: what the stream endpoints refuse, and that
// refusing changes nothing.
func TestWatchStreamBadInput(t *testing.T) {
	h, _ := newTestHandler(t, Config{})
	rec := mustServe(t, h, http.StatusCreated, "POST", "/v1/watch/streams", `{"watches":[{"key":"a"}]}`)
	var created watchStreamCreatedDoc
	decodeJSONBody(t, rec.Body.Bytes(), &created)
	base := "/v1/watch/streams/" + created.Stream
	for _, tt := range []struct {
		name, method, target, body string
		status                     int
		code                       string
	}{
		{"not JSON", "POST", "/v1/watch/streams", `{"watches":`, 400, "invalid_argument"},
		{"unknown field", "POST", "/v1/watch/streams", `{"watch":[]}`, 400, "invalid_argument"},
		{"range_end and prefix", "POST", base + "/watches", `{"key":"a","range_end":"b","prefix":true}`, 400, "invalid_argument"},
		{"range_end without a key", "POST", base + "/watches", `{"range_end":"b"}`, 400, "invalid_argument"},
		{"empty key", "POST", base + "/watches", `{"key":""}`, 400, "invalid_argument"},
		{"bad base64", "POST", base + "/watches", `{"key_base64":"%%%"}`, 400, "invalid_argument"},
		{"negative start", "POST", base + "/watches", `{"key":"a","start_revision":-1}`, 400, "invalid_argument"},
		{"bad filter", "POST", base + "/watches", `{"key":"a","filters":"noputs"}`, 400, "invalid_argument"},
		{"empty body", "POST", base + "/watches", ``, 400, "invalid_argument"},
		{"watch_id not a number", "DELETE", base + "/watches/x", "", 400, "invalid_argument"},
		{"watch_id zero", "DELETE", base + "/watches/0", "", 400, "invalid_argument"},
		{"no such watch", "DELETE", base + "/watches/7", "", 404, "watch_not_found"},
		{"no such stream", "POST", "/v1/watch/streams/nope/watches", `{"key":"a"}`, 404, "stream_not_found"},
		{"bad Last-Event-ID", "GET", base + "?last_event_id=x", "", 400, "invalid_argument"},
		{"never written Last-Event-ID", "GET", base + "?last_event_id=5", "", 400, "invalid_argument"},
		{"GET the collection", "GET", "/v1/watch/streams", "", 405, "method_not_allowed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := serve(t, h, tt.method, tt.target, tt.body)
			if rec.Code != tt.status || errorCode(t, rec) != tt.code {
				t.Fatalf("%s %s %s = %d %s, want %d %s", tt.method, tt.target, tt.body, rec.Code, rec.Body, tt.status, tt.code)
			}
		})
	}
	ms := h.wstreams.get(created.Stream)
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.live != 1 || ms.log.issued != 1 {
		t.Fatalf("after bad requests the stream has %d watchers and %d messages, want its 1 and 1", ms.live, ms.log.issued)
	}
	if n := h.wstreams.len(); n != 1 {
		t.Fatalf("%d streams, want 1", n)
	}
}

// decodeJSONBody decodes an answer's body.
func decodeJSONBody(tb testing.TB, b []byte, v any) {
	tb.Helper()
	if err := wire.Decode(b, v); err != nil {
		tb.Fatalf("%s: %v", b, err)
	}
}

// FuzzStreamCursor: a cursor is a non-negative decimal, or refused with
// 400; never a panic.
func FuzzStreamCursor(f *testing.F) {
	for _, s := range []string{"0", "12", "-1", "x", "9223372036854775807", "99999999999999999999", " 7 ", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, _ := http.NewRequest("GET", "/v1/watch/streams/x", nil)
		r.Header.Set("Last-Event-ID", s)
		n, has, err := streamCursor(r)
		if err != nil && err.code != kv.CodeInvalidArgument {
			t.Fatalf("streamCursor(%q) error %v, want a 400", s, err)
		}
		if err == nil && has && (n < 0 || fmt.Sprint(n) == "") {
			t.Fatalf("streamCursor(%q) = %d", s, n)
		}
	})
}

// FuzzWatchRequestJSON: any body either decodes to a watch whose range
// is valid, or is refused with 400; never a panic.
func FuzzWatchRequestJSON(f *testing.F) {
	for _, s := range []string{`{"key":"a"}`, `{"key":"a","prefix":true}`, `{}`, `{"prefix":true,"key":""}`,
		`{"key_base64":"/w==","range_end":"b"}`, `{"key":"a","from_key":true,"filters":"noput,nodelete"}`, `{"start_revision":-5}`, `[]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var j watchRequestDoc
		if err := wire.Decode(body, &j); err != nil {
			return
		}
		req, r, err := j.toWatch()
		if err != nil {
			if code, _, _ := kv.CodeOf(err); code != kv.CodeInvalidArgument {
				t.Fatalf("toWatch(%s) error %v, want a 400", body, err)
			}
			return
		}
		if len(req.Key) == 0 || string(req.Key) != string(r.Key) || req.StartRevision < 0 {
			t.Fatalf("toWatch(%s) = %+v over %v", body, req, r)
		}
	})
}

// TestWatchStreamFlow: past BufferBytes, ready watchers wait (deferred)
// while the reader takes, are parked once it has taken nothing for
// stallAfter, and are watched again, and get everything, once it takes
// again.
func TestWatchStreamFlow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := openTestBackend(t, embedded.Options{})
		reg := newStreamRegistry(WatchStreamConfig{BufferBytes: 1}, b, allowAll{})
		defer reg.close()
		ms, _ := reg.create(streamOwner{}, "test", nil)
		for range 3 {
			if _, err := ms.addWatch(kv.WatchRequest{Key: []byte("f/"), End: []byte("f0")}); err != nil {
				t.Fatal(err)
			}
		}
		c, err := ms.attach(0, false)
		if err != nil {
			t.Fatal(err)
		}
		taken := 0
		take := func() {
			sb, _ := ms.takePending(c)
			if sb != nil {
				taken += strings.Count(string(sb.out), `"type":"events"`)
				ms.recycle(sb)
			}
			ms.wrote(c)
		}
		take() // the created messages
		state := func() (deferred, parked int) {
			ms.mu.Lock()
			defer ms.mu.Unlock()
			return len(ms.flow.deferred), len(ms.flow.parked)
		}
		if _, err := b.Put(context.Background(), kv.PutRequest{Key: []byte("f/1"), Value: []byte("v")}, nil); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		// One watcher's message fills pending; the others wait.
		if d, p := state(); d != 2 || p != 0 {
			t.Fatalf("pending full, the reader taking: %d deferred and %d parked, want 2 and 0", d, p)
		}
		time.Sleep(stallAfter)
		synctest.Wait()
		if d, p := state(); d != 0 || p != 2 {
			t.Fatalf("the reader stalled for %v: %d deferred and %d parked, want 0 and 2", stallAfter, d, p)
		}
		for range 10 {
			take()
			synctest.Wait()
		}
		if d, p := state(); taken != 3 || d != 0 || p != 0 {
			t.Fatalf("the reader took again: %d events taken, %d deferred, %d parked; want 3, 0, 0", taken, d, p)
		}
	})
}
