package httpapi

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/internal/wiretest"
	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/stream/multi"
	"github.com/httpkv/httpkv/wire"
)

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
	ms := h.wstreams.Get(created.Stream)
	if st := ms.Stats(); st.Watchers != 1 || st.Messages != 1 {
		t.Fatalf("after bad requests the stream has %d watchers and %d messages, want its 1 and 1", st.Watchers, st.Messages)
	}
	if n := h.wstreams.Len(); n != 1 {
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

// TestWatchStreamMessagesDeclared: every kind of message a stream of many
// watchers writes (the engine's encoding, stream/multi) decodes into the
// type the API declares for it, refusing fields it does not declare:
// created, events, compacted and canceled, read through the handler.
func TestWatchStreamMessagesDeclared(t *testing.T) {
	h, _ := newTestHandler(t, Config{})
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Close()
		h.Close()
	})
	for i := range 4 {
		mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/k", fmt.Sprintf("v%d", i))
	}
	mustServe(t, h, http.StatusOK, "POST", "/v1/compact", `{"revision":4,"physical":true}`)
	rec := mustServe(t, h, http.StatusCreated, "POST", "/v1/watch/streams", `{"watches":[{"key":"k"},{"key":"k","start_revision":2}]}`)
	var created watchStreamCreatedDoc
	decodeJSONBody(t, rec.Body.Bytes(), &created)
	s := openWatch(t, srv.Client(), srv, "/v1/watch/streams/"+created.Stream)
	mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/k", "after")
	seen := map[string]bool{}
	for len(seen) < 5 {
		if seen[""] && !seen["deleted"] {
			// Its events read, the first watcher is canceled.
			mustServe(t, h, http.StatusOK, "DELETE", fmt.Sprintf("/v1/watch/streams/%s/watches/%d", created.Stream, created.Watches[0].WatchID), "")
			seen["deleted"] = true
		}
		m := s.next(t, streamTimeout)
		what := "stream message " + m.Data
		switch m.Event {
		case "created":
			d := wiretest.Decode[watchStreamCreatedMsgDoc](t, what, []byte(m.Data))
			if d.Type != "created" || d.WatchID < 1 || d.StartRevision < 1 {
				t.Fatalf("%s: %+v", what, d)
			}
		case "compacted":
			d := wiretest.Decode[watchStreamCompactedDoc](t, what, []byte(m.Data))
			if d.Type != "compacted" || d.CompactRevision != 4 {
				t.Fatalf("%s: %+v, want compacted at 4", what, d)
			}
		case "canceled":
			d := wiretest.Decode[watchStreamCanceledDoc](t, what, []byte(m.Data))
			if d.Type != "canceled" || d.Reason != "watch deleted" {
				t.Fatalf("%s: %+v, want canceled: watch deleted", what, d)
			}
		case "":
			d := wiretest.Decode[watchStreamEventsDoc](t, what, []byte(m.Data))
			if d.Type != "events" || len(d.Events) != 1 || d.Events[0].KV.Value != "after" {
				t.Fatalf("%s: %+v, want the put of after", what, d)
			}
		default:
			t.Fatalf("%s: event %q", what, m.Event)
		}
		if !m.HasID || m.ID == "" {
			t.Fatalf("%s without an id", what)
		}
		seen[m.Event] = true
	}
}

// TestStreamErrorsAnswer: the engine's errors answer with the API's code
// and message, the header or flag that helps included.
func TestStreamErrorsAnswer(t *testing.T) {
	for _, tt := range []struct {
		err           error
		code, message string
	}{
		{multi.ErrStreamNotFound, "stream_not_found", "no such watch stream: it was deleted, or dropped after a while without a connection, or is another user's"},
		{multi.ErrWatchNotFound, "watch_not_found", "no such watch on this stream, or it has ended"},
		{multi.ErrBusy, "unavailable", "the streams changed 32 times while this change was made; retry"},
		{multi.ErrCursorNeeded, "invalid_argument", "this stream was read before: reconnect with Last-Event-ID (or last_event_id), the id of the last message received"},
		{&multi.LimitError{Limit: multi.LimitStreams, Max: 3}, "too_many_requests", "the server has 3 watch streams, its most (--max-watch-streams); retry later"},
		{&multi.LimitError{Limit: multi.LimitDeploymentStreams, Max: 3}, "too_many_requests", "the deployment has 3 watch streams, its most (--max-watch-streams); retry later"},
		{&multi.LimitError{Limit: multi.LimitStreamsPerOwner, Max: 2}, "too_many_requests", "at most 2 watch streams per user, or per client address with auth off (--max-watch-streams-per-user): delete one, or add watches to one"},
		{multi.TooManyWatchers(5), "too_many_requests", "a stream has at most 5 watchers (--max-watchers-per-stream)"},
		{&multi.LimitError{Limit: multi.LimitRecordBytes, Max: 1 << 20}, "too_many_requests", "a stream's watchers take at most 1048576 bytes to record: delete some, or make another stream"},
		{&multi.CursorError{Problem: multi.CursorMalformed, Text: "x"}, "invalid_argument", `Last-Event-ID must be the id of a message of this stream, not "x"`},
		{&multi.CursorError{Problem: multi.CursorMalformed, Text: strings.Repeat("y", 70)}, "invalid_argument", `Last-Event-ID must be the id of a message of this stream, not "` + strings.Repeat("y", 64) + `..."`},
		{&multi.CursorError{Problem: multi.CursorTooLong, Text: strings.Repeat("1", 5000)}, "invalid_argument", "Last-Event-ID is 5000 bytes, more than any id of a stream (4352)"},
		{&multi.CursorError{Problem: multi.CursorUnknown, Seq: 9}, "invalid_argument", "Last-Event-ID 9 is not the id of a message of this stream"},
		{&multi.CursorError{Problem: multi.CursorUnknownWatchers}, "invalid_argument", "Last-Event-ID names watchers this stream never had"},
	} {
		if ae := toAPIError(tt.err); string(ae.code) != tt.code || ae.message != tt.message {
			t.Errorf("toAPIError(%v) = %s %q, want %s %q", tt.err, ae.code, ae.message, tt.code, tt.message)
		}
	}
	if got := streamEndReason(multi.ErrGatewayWatchers); got != "too many watchers on this gateway (--max-watchers)" {
		t.Errorf("streamEndReason(ErrGatewayWatchers) = %q", got)
	}
}
