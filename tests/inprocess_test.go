package tests

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/rs/zerolog"

	"github.com/httpkv/httpkv/backend/embedded"
	"github.com/httpkv/httpkv/httpapi"
	"github.com/httpkv/httpkv/mvcc"
	"github.com/httpkv/httpkv/mvcc/mvcctest"
)

// inProcess is the API served in process, wired as the server wires it,
// for tests that need to reach inside: its store's commits go through a
// fault injector, and its figures can be read.
type inProcess struct {
	*server
	faults  *mvcctest.Committer
	backend *embedded.Backend
	handler *httpapi.Handler
	http    *httptest.Server
}

// startInProcess serves the embedded store in the data directory dir. Its
// clients may stall for stalledWriteTimeout.
func startInProcess(tb testing.TB, dir string) *inProcess {
	tb.Helper()
	f := &inProcess{faults: &mvcctest.Committer{}}
	b, err := embedded.Open(dir, embedded.Options{Store: mvcc.Options{Committer: f.faults}})
	if err != nil {
		tb.Fatalf("embedded.Open(%s) = %v", dir, err)
	}
	f.backend = b
	f.handler = httpapi.NewHandler(httpapi.Config{Backend: b, Logger: zerolog.Nop(), WriteTimeout: stalledWriteTimeout})
	f.http = httptest.NewServer(f.handler)
	f.server = &server{URL: f.http.URL, tb: tb, client: &http.Client{Timeout: requestTimeout}, streams: &http.Client{Transport: &http.Transport{}}}
	tb.Cleanup(f.close)
	return f
}

// close shuts down as the server does: the watch streams, HTTP, then the
// backend.
func (f *inProcess) close() {
	if f.http == nil {
		return
	}
	f.handler.Close()
	f.http.Close()
	f.client.CloseIdleConnections()
	f.streams.CloseIdleConnections()
	f.backend.Close()
	f.http = nil
}
