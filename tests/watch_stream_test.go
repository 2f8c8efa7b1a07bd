package tests

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/httpkv/httpkv/internal/ssetest"
	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// watchMessage is a checked message of a watch stream.
type watchMessage struct {
	Kind            string // message, created, progress, compacted, canceled
	ID              int64  // of message and progress
	Header          client.ResponseHeader
	StartRevision   int64
	CompactRevision int64
	Events          []client.WatchEvent
	Reason          string
	raw             sseMessage
}

// sseResult is what the parser gave: a message or the error ending the
// stream (io.EOF at a clean end).
type sseResult struct {
	msg sseMessage
	err error
}

// watchStream is an open GET /v1/watch read as Server-Sent Events. Every
// message is parsed by ssetest.Parser and checked against the contract as it
// is read: ids increase, a progress bookmark is never followed by an event
// at or below it, every event of a message is of the message's revision,
// compacted comes after "retry: 60000" and ends the stream, as canceled
// does.
type watchStream struct {
	*sseConn
	header  http.Header
	created watchMessage

	lastID int64 // the newest id seen, of a message or a bookmark
	retry  int64 // a retry block waiting for the message it belongs to
	final  bool  // compacted or canceled was read: the stream must end
	ended  bool  // the stream ended cleanly
}

// openWatch opens a watch with the query and request headers (name, value
// pairs), checks the answer's headers and the preamble (retry: 1000, then
// the created event) and returns the stream. It is closed on cleanup.
func openWatch(tb testing.TB, s *e2e.Server, query string, header ...string) *watchStream {
	tb.Helper()
	return openWatchWith(tb, s.Streams, s, query, header...)
}

// openWatchWith is openWatch through the given client.
func openWatchWith(tb testing.TB, client *http.Client, s *e2e.Server, query string, header ...string) *watchStream {
	tb.Helper()
	resp, c := dialSSE(tb, client, s.URL+"/v1/watch?"+query, "GET /v1/watch?"+query, header...)
	w := &watchStream{sseConn: c, header: resp.Header}
	c.start(resp)
	if cc := resp.Header.Get("Cache-Control"); cc != "no-cache" {
		tb.Errorf("%s: Cache-Control %q, want no-cache", w.req, cc)
	}

	first := w.recv(e2e.WatchTimeout)
	if !first.raw.HasRetry || first.raw.Retry != 1000 || first.raw.HasData {
		tb.Fatalf("%s: first block %v, want \"retry: 1000\" alone", w.req, first.raw)
	}
	w.retry = 0
	w.created = w.next(e2e.WatchTimeout)
	if w.created.Kind != "created" || w.created.StartRevision <= 0 || w.created.Header.Revision <= 0 {
		tb.Fatalf("%s: first message %v, want created with start_revision and header", w.req, w.created.raw)
	}
	if xr := resp.Header.Get("X-Revision"); xr != strconv.FormatInt(w.created.Header.Revision, 10) {
		tb.Errorf("%s: X-Revision %q, want %d as in the created event", w.req, xr, w.created.Header.Revision)
	}
	return w
}

// recv returns the next block: a retry block as a message of kind
// "retry", anything else checked. It fails the test on a malformed stream,
// an unexpected end, or when nothing comes within timeout.
func (w *watchStream) recv(timeout time.Duration) watchMessage {
	w.tb.Helper()
	m, err := w.recvOrEnd(timeout)
	w.wantMore(err)
	return m
}

// recvOrEnd is recv that returns io.EOF at the clean end of the stream.
func (w *watchStream) recvOrEnd(timeout time.Duration) (watchMessage, error) {
	w.tb.Helper()
	if w.ended {
		return watchMessage{}, io.EOF
	}
	res := awaitSSE(w.tb, w.results, timeout, w.req, w.lastID)
	if res.err == io.EOF {
		w.ended = true
		return watchMessage{}, io.EOF
	}
	if errors.Is(res.err, ssetest.ErrSyntax) {
		w.tb.Fatalf("%s: %v", w.req, res.err)
	}
	if res.err != nil {
		return watchMessage{}, res.err
	}
	if w.final {
		w.tb.Fatalf("%s: %v after the final message, want the end of the stream", w.req, res.msg)
	}
	return w.check(res.msg), nil
}

// awaitSSE returns what the parser of a stream gives next; it fails the
// test when nothing comes within timeout, or the stream is malformed.
func awaitSSE(tb testing.TB, results <-chan sseResult, timeout time.Duration, req string, lastID int64) sseResult {
	tb.Helper()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var res sseResult
	select {
	case res = <-results:
	case <-timer.C:
		tb.Fatalf("%s: no message within %v (last id %d)", req, timeout, lastID)
	}
	if errors.Is(res.err, ssetest.ErrSyntax) {
		tb.Fatalf("%s: %v", req, res.err)
	}
	return res
}

// next returns the next message, skipping nothing but checking
// everything: a retry block is only allowed right before compacted.
func (w *watchStream) next(timeout time.Duration) watchMessage {
	w.tb.Helper()
	for {
		m := w.recv(timeout)
		if m.Kind != "retry" {
			return m
		}
	}
}

// nextData returns the next data message, skipping progress bookmarks.
func (w *watchStream) nextData(timeout time.Duration) watchMessage {
	w.tb.Helper()
	for {
		m := w.next(timeout)
		switch m.Kind {
		case "message":
			return m
		case "progress":
			continue
		}
		w.tb.Fatalf("%s: %v, want a data message", w.req, m.raw)
	}
}

// wantEnd fails unless the stream ends next.
func (w *watchStream) wantEnd(timeout time.Duration) {
	w.tb.Helper()
	if m, err := w.recvOrEnd(timeout); err != io.EOF {
		w.tb.Fatalf("%s: %v (%v), want the end of the stream", w.req, m.raw, err)
	}
}

// check decodes a block and checks it against the contract and the
// stream's history.
func (w *watchStream) check(m sseMessage) watchMessage {
	w.tb.Helper()
	fail := func(format string, args ...any) {
		w.tb.Helper()
		w.tb.Fatalf("%s: %v: %s", w.req, m, fmt.Sprintf(format, args...))
	}
	if m.HasRetry {
		if m.HasData || m.HasID || m.Event != "" {
			fail("retry shares its block with a message")
		}
		if w.retry != 0 {
			fail("two retry blocks in a row")
		}
		w.retry = m.Retry
		return watchMessage{Kind: "retry", raw: m}
	}
	out := watchMessage{Kind: m.Event, raw: m}
	if out.Kind == "" {
		out.Kind = "message"
	}
	if err := e2e.CheckTwins([]byte(m.Data)); err != nil {
		fail("%v", err)
	}
	e2e.CheckWatchMessage(w.tb, w.req, []byte(m.Data))
	if strings.Contains(m.Data, "\n") {
		fail("a payload of several data lines")
	}
	payload, err := decodeWatchPayload([]byte(m.Data), false)
	if err != nil {
		fail("data is not one watch message: %v", err)
	}
	// The data alone says what the message is, for clients that see no
	// event line: the event's name, or events for the default one.
	if want := cmp.Or(m.Event, "events"); payload.Type != want {
		fail("data's type %q, want %q", payload.Type, want)
	}
	if payload.Header != nil {
		out.Header = *payload.Header
	}
	out.StartRevision, out.CompactRevision = payload.StartRevision, payload.CompactRevision
	out.Events, out.Reason = payload.Events, payload.Reason
	if m.HasID {
		id, err := strconv.ParseInt(m.ID, 10, 64)
		if err != nil || id <= 0 || strconv.FormatInt(id, 10) != m.ID {
			fail("id %q is not a revision", m.ID)
		}
		out.ID = id
	}
	if w.retry != 0 && out.Kind != "compacted" {
		fail("a retry block before %s", out.Kind)
	}
	switch out.Kind {
	case "message":
		if !m.HasID || payload.Header == nil || out.Header.Revision != out.ID {
			fail("a data message needs an id equal to its header.revision")
		}
		if out.ID <= w.lastID {
			fail("id %d after id %d: ids must increase", out.ID, w.lastID)
		}
		if len(out.Events) == 0 {
			fail("a data message with no events")
		}
		for _, ev := range out.Events {
			switch {
			case ev.Kv.ModRevision != out.ID:
				fail("event %v of revision %d in the message of revision %d", ev, ev.Kv.ModRevision, out.ID)
			case ev.Type == "put" && ev.Kv.Value == nil && ev.Kv.ValueBase64 == nil:
				fail("a put event without a value")
			case ev.Type == "delete" && (ev.Kv.Value != nil || ev.Kv.ValueBase64 != nil):
				fail("a delete event with a value")
			case ev.Type != "put" && ev.Type != "delete":
				fail("event type %q", ev.Type)
			}
		}
		w.lastID = out.ID
	case "progress":
		if !m.HasID || payload.Header == nil || out.Header.Revision != out.ID {
			fail("a progress bookmark needs an id equal to its header.revision")
		}
		if out.ID < w.lastID {
			fail("bookmark %d after id %d", out.ID, w.lastID)
		}
		w.lastID = out.ID
	case "created":
		// created is a bookmark just before the start: a client that
		// reconnects before any event resumes at the start.
		// (From revision 1 there is no revision before: no id.)
		if m.HasID != (out.StartRevision > 1) || payload.Header == nil || m.HasID && out.ID != out.StartRevision-1 {
			fail("created needs a header and id start_revision-1")
		}
		w.lastID = out.ID
	case "compacted":
		if w.retry != 60000 {
			fail("compacted without \"retry: 60000\" before it")
		}
		if m.HasID || payload.Header == nil || out.CompactRevision <= 0 {
			fail("compacted needs a header, a compact_revision and no id")
		}
		w.final = true
	case "canceled":
		if m.HasID || out.Reason == "" {
			fail("canceled needs a reason and no id")
		}
		w.final = true
	default:
		fail("unknown event %q", out.Kind)
	}
	w.retry = 0
	return out
}

// eventLine formats an event for comparisons: "put k=v @mod" or
// "delete k @mod".
func eventLine(e client.WatchEvent) string {
	if e.Type == "delete" {
		return fmt.Sprintf("delete %s @%d", e2e.KeyOf(&e.Kv), e.Kv.ModRevision)
	}
	return fmt.Sprintf("put %s=%s @%d", e2e.KeyOf(&e.Kv), e2e.ValueOf(&e.Kv), e.Kv.ModRevision)
}
