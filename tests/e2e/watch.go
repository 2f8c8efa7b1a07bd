package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	kvclient "github.com/httpkv/httpkv/client"
	"github.com/httpkv/httpkv/openapi/client"
)

// The Go watch helpers of package client, against the real binary: a
// watch, and a stream of many watchers, deliver an exact history across
// a kill -9 and a restart of the server mid-stream.

// watchValue is large enough that the history a watch replays does not
// fit in the connection's buffers: the kill cuts it mid-stream.
var watchValue = strings.Repeat("v", 2048)

// NewKVClient is a client of package client for s.
func NewKVClient(tb testing.TB, s *Server) *kvclient.Client {
	tb.Helper()
	c, err := kvclient.New(s.URL)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// PutEvents puts prefix<from>..prefix<from+n-1> and returns the events
// a watch of them delivers, "rev type key" each.
func PutEvents(tb testing.TB, c *kvclient.Client, prefix string, from, n int) []string {
	tb.Helper()
	var want []string
	for i := from; i < from+n; i++ {
		key := fmt.Sprintf("%s%04d", prefix, i)
		put, err := c.Put(context.Background(), key, []byte(watchValue), kvclient.PutOptions{})
		if err != nil {
			tb.Fatalf("put %s: %v", key, err)
		}
		want = append(want, fmt.Sprintf("%d put %s", put.Header.Revision, key))
	}
	return want
}

// SameHistory fails unless got and want are the same events in order.
func SameHistory(tb testing.TB, what string, got, want []string) {
	tb.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		tb.Fatalf("%s delivered %d events, want %d:\ngot  %q\nwant %q", what, len(got), len(want), got, want)
	}
}

// WatchTimeout bounds the wait for any one watch message: a healthy
// server sends it well within it, even on a loaded machine.
const WatchTimeout = time.Minute

// EventString shows an event for a failure message.
func EventString(e *client.WatchEvent) string {
	s := string(e.Type) + " " + KVString(&e.Kv)
	if e.PrevKv != nil {
		s += " prev " + KVString(e.PrevKv)
	}
	return s
}

// WatcherCount is the number of watchers GET /v1/status reports.
func WatcherCount(tb testing.TB, s *Server) int {
	tb.Helper()
	st := s.Status(tb)
	return int(st.Watchers.Synced + st.Watchers.Unsynced + st.Watchers.Victims)
}

// WithSmallReceiveBuffer returns a copy of s whose streams are read with
// a 4 KiB socket receive buffer, so that a reader that stops reading
// stops the server's writes soon.
func (s *Server) WithSmallReceiveBuffer() *Server {
	c := *s
	dialer := &net.Dialer{Timeout: 5 * time.Second, Control: func(_, _ string, rc syscall.RawConn) error {
		var err error
		if cerr := rc.Control(func(fd uintptr) {
			err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<10)
		}); cerr != nil {
			return cerr
		}
		return err
	}}
	c.Streams = &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext}}
	return &c
}

// A client of /v1/watch/streams for the end-to-end tests: it creates
// streams, adds and cancels watchers, and reads a stream's messages, each
// checked against the contract and the OpenAPI document as it is read.

// CreateStream creates a stream with the body's watches and returns its
// id and the watch ids.
func (s *Server) CreateStream(tb testing.TB, body string, header ...string) (string, []int64) {
	tb.Helper()
	var out client.WatchStreamCreated
	s.Do(tb, "POST", "/v1/watch/streams", []byte(body), append(header, "Content-Type", "application/json")...).Ok(tb, http.StatusCreated, &out)
	if out.Stream == "" {
		tb.Fatalf("POST /v1/watch/streams %s: no stream id", body)
	}
	ids := make([]int64, len(out.Watches))
	for i, w := range out.Watches {
		ids[i] = w.WatchId
	}
	return out.Stream, ids
}

// AddWatch adds a watcher to a stream and returns its watch id.
func (s *Server) AddWatch(tb testing.TB, stream, body string, header ...string) int64 {
	tb.Helper()
	var out client.WatchAdded
	s.Do(tb, "POST", "/v1/watch/streams/"+stream+"/watches", []byte(body), append(header, "Content-Type", "application/json")...).
		Ok(tb, http.StatusCreated, &out)
	if out.WatchId <= 0 {
		tb.Fatalf("POST /v1/watch/streams/%s/watches %s: watch_id %d", stream, body, out.WatchId)
	}
	return out.WatchId
}

// WatchSpec is a watch as a stream takes it (JSON) and the history query
// of what it delivers.
type WatchSpec struct {
	Body, History string
}

// From returns the spec starting at revision rev.
func (w WatchSpec) From(rev int64) WatchSpec {
	sep := func(s string) string {
		if s == "" {
			return ""
		}
		return ","
	}
	inner := strings.TrimSuffix(strings.TrimPrefix(w.Body, "{"), "}")
	q := w.History
	if q != "" {
		q += "&"
	}
	return WatchSpec{
		Body:    fmt.Sprintf(`{%s%s"start_revision":%d}`, inner, sep(inner), rev),
		History: fmt.Sprintf("%sstart_revision=%d", q, rev),
	}
}

// Expected returns what a watch of spec, started at start, delivers up
// to revision end, from GET /v1/history.
func (s *Server) Expected(tb testing.TB, spec WatchSpec, start, end int64) []string {
	tb.Helper()
	q := spec.History
	if !strings.Contains(q, "start_revision=") {
		q = strings.TrimPrefix(q+fmt.Sprintf("&start_revision=%d", start), "&")
	}
	evs, _ := s.HistoryPages(tb, strings.TrimPrefix(q+fmt.Sprintf("&end_revision=%d&limit=10000", end), "&"), nil)
	return evs
}
