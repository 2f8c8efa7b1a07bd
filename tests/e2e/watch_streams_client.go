package e2e

import (
	"net/http"
	"testing"

	"github.com/httpkv/httpkv/openapi/client"
)

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
