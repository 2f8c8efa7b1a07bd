package tests

import (
	"cmp"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// streamMessage is a checked message of a stream of many watchers.
type streamMessage struct {
	Kind            string // events, created, progress, compacted, canceled
	ID              int64  // the cursor
	WatchID         int64
	Header          client.ResponseHeader
	StartRevision   int64
	CompactRevision int64
	Events          []client.WatchEvent
	Reason          string
	raw             sseMessage
}

// streamReader is an open GET /v1/watch/streams/{stream}.
type streamReader struct {
	*e2e.SSEConn
	lastID   int64
	lastText string // the last id as sent: over etcd, with the watchers' positions
	ended    bool
}

// noCursor opens a stream without Last-Event-ID.
const noCursor = -1

// openStream reads a stream, resuming after cursor unless it is noCursor;
// header are more request headers (name, value pairs). The answer must be
// 200 and open with "retry: 1000".
func openStream(tb testing.TB, s *e2e.Server, stream string, cursor int64, header ...string) *streamReader {
	tb.Helper()
	resp, r := requestStream(tb, s, stream, cursor, header...)
	r.Start(resp)
	first, err := r.recvOrEnd(e2e.WatchTimeout)
	if err != nil || !first.HasRetry || first.Retry != 1000 || first.HasData {
		tb.Fatalf("%s: first block %v, want \"retry: 1000\" alone", r.Req, first)
	}
	return r
}

// requestStream sends the GET of a stream and returns its answer, whose
// body the caller reads or closes.
func requestStream(tb testing.TB, s *e2e.Server, stream string, cursor int64, header ...string) (*http.Response, *streamReader) {
	tb.Helper()
	req := "GET /v1/watch/streams/" + stream
	if cursor != noCursor {
		header = append(header, "Last-Event-ID", strconv.FormatInt(cursor, 10))
		req += fmt.Sprintf(" (Last-Event-ID %d)", cursor)
	}
	resp, c := e2e.DialSSE(tb, s.Streams, s.URL+"/v1/watch/streams/"+stream, req, header...)
	return resp, &streamReader{SSEConn: c}
}

// recvOrEnd returns the next block as parsed, or the error that ended
// the stream (io.EOF at its clean end).
func (r *streamReader) recvOrEnd(timeout time.Duration) (sseMessage, error) {
	r.TB.Helper()
	if r.ended {
		return sseMessage{}, io.EOF
	}
	res := e2e.AwaitSSE(r.TB, r.Results, timeout, r.Req, r.lastID)
	if res.Err != nil {
		r.ended = true
	}
	return res.Msg, res.Err
}

// next returns the next message, checked.
func (r *streamReader) next(timeout time.Duration) streamMessage {
	r.TB.Helper()
	m, err := r.nextOrEnd(timeout)
	r.WantMore(err)
	return m
}

// nextOrEnd is next, or io.EOF at the end of the stream.
func (r *streamReader) nextOrEnd(timeout time.Duration) (streamMessage, error) {
	r.TB.Helper()
	m, err := r.recvOrEnd(timeout)
	if err != nil {
		return streamMessage{}, err
	}
	return r.check(m), nil
}

// wantEnd fails unless the stream ends next.
func (r *streamReader) wantEnd(timeout time.Duration) {
	r.TB.Helper()
	if m, err := r.recvOrEnd(timeout); err == nil {
		r.TB.Fatalf("%s: %v, want the end of the stream", r.Req, m)
	}
}

// check decodes a message and checks it against the contract: an id on
// every message, increasing; data of one line, a WatchStreamMessage of
// the document whose type is the event's name (events for the default
// one) and whose watch_id is set; a data message's events all of its
// header's revision.
func (r *streamReader) check(m sseMessage) streamMessage {
	r.TB.Helper()
	fail := func(format string, args ...any) {
		r.TB.Helper()
		r.TB.Fatalf("%s: %v: %s", r.Req, m, fmt.Sprintf(format, args...))
	}
	if m.HasRetry || !m.HasData || strings.Contains(m.Data, "\n") {
		fail("want one message of one data line, without retry")
	}
	if err := e2e.CheckTwins([]byte(m.Data)); err != nil {
		fail("%v", err)
	}
	doc, _, err := e2e.LoadAPIDoc()
	if err == nil {
		err = e2e.MatchSchema(doc, "WatchStreamMessage", []byte(m.Data))
	}
	if err != nil {
		fail("does not match the OpenAPI document: %v", err)
	}
	p, err := e2e.DecodeStreamPayload([]byte(m.Data))
	if err != nil {
		fail("data is not one stream message: %v", err)
	}
	out := streamMessage{Kind: cmp.Or(m.Event, "events"), WatchID: p.WatchID, StartRevision: p.StartRevision,
		CompactRevision: p.CompactRevision, Events: p.Events, Reason: p.Reason, raw: m}
	if p.Header != nil {
		out.Header = *p.Header
	}
	if p.Type != out.Kind {
		fail("data's type %q, want %q", p.Type, out.Kind)
	}
	if p.WatchID <= 0 {
		fail("no watch_id")
	}
	// Over etcd the id goes on after its sequence number with where
	// the watchers stand (for another gateway); on the gateway that
	// wrote it, the sequence number alone resumes it.
	seq, _, _ := strings.Cut(m.ID, ".")
	id, err := strconv.ParseInt(seq, 10, 64)
	if !m.HasID || err != nil || id <= r.lastID {
		fail("id %q after %d: every message needs an id above the one before", m.ID, r.lastID)
	}
	out.ID, r.lastID, r.lastText = id, id, m.ID
	switch out.Kind {
	case "events":
		if len(out.Events) == 0 {
			fail("a data message with no events")
		}
		for _, ev := range out.Events {
			if ev.Kv.ModRevision != out.Header.Revision {
				fail("event %v in the message of revision %d", ev, out.Header.Revision)
			}
		}
	case "created":
		if out.StartRevision <= 0 || p.Header == nil {
			fail("created needs start_revision and a header")
		}
	case "canceled":
		if out.Reason == "" {
			fail("canceled needs a reason")
		}
	case "compacted":
		if out.CompactRevision <= 0 {
			fail("compacted needs compact_revision")
		}
	case "progress":
	default:
		fail("unknown event %q", out.Kind)
	}
	return out
}

func (m streamMessage) String() string { return m.raw.String() }
