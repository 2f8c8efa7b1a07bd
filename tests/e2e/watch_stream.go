package e2e

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
)

// WatchMessage is a checked message of a watch stream.
type WatchMessage struct {
	Kind            string // message, created, progress, compacted, canceled
	ID              int64  // of message and progress
	Header          client.ResponseHeader
	StartRevision   int64
	CompactRevision int64
	Events          []client.WatchEvent
	Reason          string
	Raw             ssetest.Message // the block as parsed
}

// SSEResult is what the parser gave: a message or the error ending the
// stream (io.EOF at a clean end).
type SSEResult struct {
	Msg ssetest.Message
	Err error
}

// WatchStream is an open GET /v1/watch read as Server-Sent Events. Every
// message is parsed by ssetest.Parser and checked against the contract as it
// is read: ids increase, a progress bookmark is never followed by an event
// at or below it, every event of a message is of the message's revision,
// compacted comes after "retry: 60000" and ends the stream, as canceled
// does.
type WatchStream struct {
	*SSEConn
	header  http.Header
	Created WatchMessage // the created message OpenWatch read

	lastID int64 // the newest id seen, of a message or a bookmark
	retry  int64 // a retry block waiting for the message it belongs to
	final  bool  // compacted or canceled was read: the stream must end
	ended  bool  // the stream ended cleanly
}

// OpenWatch opens a watch with the query and request headers (name, value
// pairs), checks the answer's headers and the preamble (retry: 1000, then
// the created event) and returns the stream. It is closed on cleanup.
func OpenWatch(tb testing.TB, s *Server, query string, header ...string) *WatchStream {
	tb.Helper()
	return OpenWatchWith(tb, s.Streams, s, query, header...)
}

// OpenWatchWith is OpenWatch through the given client.
func OpenWatchWith(tb testing.TB, client *http.Client, s *Server, query string, header ...string) *WatchStream {
	tb.Helper()
	resp, c := DialSSE(tb, client, s.URL+"/v1/watch?"+query, "GET /v1/watch?"+query, header...)
	w := &WatchStream{SSEConn: c, header: resp.Header}
	c.Start(resp)
	if cc := resp.Header.Get("Cache-Control"); cc != "no-cache" {
		tb.Errorf("%s: Cache-Control %q, want no-cache", w.Req, cc)
	}

	first := w.recv(WatchTimeout)
	if !first.Raw.HasRetry || first.Raw.Retry != 1000 || first.Raw.HasData {
		tb.Fatalf("%s: first block %v, want \"retry: 1000\" alone", w.Req, first.Raw)
	}
	w.retry = 0
	w.Created = w.Next(WatchTimeout)
	if w.Created.Kind != "created" || w.Created.StartRevision <= 0 || w.Created.Header.Revision <= 0 {
		tb.Fatalf("%s: first message %v, want created with start_revision and header", w.Req, w.Created.Raw)
	}
	if xr := resp.Header.Get("X-Revision"); xr != strconv.FormatInt(w.Created.Header.Revision, 10) {
		tb.Errorf("%s: X-Revision %q, want %d as in the created event", w.Req, xr, w.Created.Header.Revision)
	}
	return w
}

// recv returns the next block: a retry block as a message of kind
// "retry", anything else checked. It fails the test on a malformed stream,
// an unexpected end, or when nothing comes within timeout.
func (w *WatchStream) recv(timeout time.Duration) WatchMessage {
	w.TB.Helper()
	m, err := w.recvOrEnd(timeout)
	w.WantMore(err)
	return m
}

// recvOrEnd is recv that returns io.EOF at the clean end of the stream.
func (w *WatchStream) recvOrEnd(timeout time.Duration) (WatchMessage, error) {
	w.TB.Helper()
	if w.ended {
		return WatchMessage{}, io.EOF
	}
	res := AwaitSSE(w.TB, w.Results, timeout, w.Req, w.lastID)
	if res.Err == io.EOF {
		w.ended = true
		return WatchMessage{}, io.EOF
	}
	if errors.Is(res.Err, ssetest.ErrSyntax) {
		w.TB.Fatalf("%s: %v", w.Req, res.Err)
	}
	if res.Err != nil {
		return WatchMessage{}, res.Err
	}
	if w.final {
		w.TB.Fatalf("%s: %v after the final message, want the end of the stream", w.Req, res.Msg)
	}
	return w.check(res.Msg), nil
}

// AwaitSSE returns what the parser of a stream gives next; it fails the
// test when nothing comes within timeout, or the stream is malformed.
func AwaitSSE(tb testing.TB, results <-chan SSEResult, timeout time.Duration, req string, lastID int64) SSEResult {
	tb.Helper()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var res SSEResult
	select {
	case res = <-results:
	case <-timer.C:
		tb.Fatalf("%s: no message within %v (last id %d)", req, timeout, lastID)
	}
	if errors.Is(res.Err, ssetest.ErrSyntax) {
		tb.Fatalf("%s: %v", req, res.Err)
	}
	return res
}

// Next returns the next message, skipping nothing but checking
// everything: a retry block is only allowed right before compacted.
func (w *WatchStream) Next(timeout time.Duration) WatchMessage {
	w.TB.Helper()
	for {
		m := w.recv(timeout)
		if m.Kind != "retry" {
			return m
		}
	}
}

// NextData returns the next data message, skipping progress bookmarks.
func (w *WatchStream) NextData(timeout time.Duration) WatchMessage {
	w.TB.Helper()
	for {
		m := w.Next(timeout)
		switch m.Kind {
		case "message":
			return m
		case "progress":
			continue
		}
		w.TB.Fatalf("%s: %v, want a data message", w.Req, m.Raw)
	}
}

// WantEnd fails unless the stream ends next.
func (w *WatchStream) WantEnd(timeout time.Duration) {
	w.TB.Helper()
	if m, err := w.recvOrEnd(timeout); err != io.EOF {
		w.TB.Fatalf("%s: %v (%v), want the end of the stream", w.Req, m.Raw, err)
	}
}

// check decodes a block and checks it against the contract and the
// stream's history.
func (w *WatchStream) check(m ssetest.Message) WatchMessage {
	w.TB.Helper()
	fail := func(format string, args ...any) {
		w.TB.Helper()
		w.TB.Fatalf("%s: %v: %s", w.Req, m, fmt.Sprintf(format, args...))
	}
	if m.HasRetry {
		if m.HasData || m.HasID || m.Event != "" {
			fail("retry shares its block with a message")
		}
		if w.retry != 0 {
			fail("two retry blocks in a row")
		}
		w.retry = m.Retry
		return WatchMessage{Kind: "retry", Raw: m}
	}
	out := WatchMessage{Kind: m.Event, Raw: m}
	if out.Kind == "" {
		out.Kind = "message"
	}
	if err := CheckTwins([]byte(m.Data)); err != nil {
		fail("%v", err)
	}
	CheckWatchMessage(w.TB, w.Req, []byte(m.Data))
	if strings.Contains(m.Data, "\n") {
		fail("a payload of several data lines")
	}
	payload, err := DecodeWatchPayload([]byte(m.Data), false)
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

// WantCanceled fails unless the stream's next message is event: canceled
// with the reason, and then the stream ends.
func WantCanceled(tb testing.TB, w *WatchStream, reason string, timeout time.Duration) {
	tb.Helper()
	m := w.Next(timeout)
	if m.Kind != "canceled" || m.Reason != reason {
		tb.Fatalf("%s: %v, want event: canceled with reason %q", w.Req, m.Raw, reason)
	}
	w.WantEnd(WatchTimeout)
}
