package tests

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/rs/zerolog"

	"github.com/httpkv/httpkv/httpapi"
	"github.com/httpkv/httpkv/mvcc"
	"github.com/httpkv/httpkv/mvcc/mvcctest"
	"github.com/httpkv/httpkv/watch"
)

// inProcess is the API served in process, wired as the server wires it,
// for tests that need to reach inside: its store's commits go through a
// fault injector, and its watch store's figures can be read.
type inProcess struct {
	*server
	faults  *mvcctest.Committer
	kv      *mvcc.Store
	store   *watch.Store
	handler *httpapi.Handler
	http    *httptest.Server
}

func startInProcess(tb testing.TB, path string) *inProcess {
	tb.Helper()
	f := &inProcess{faults: &mvcctest.Committer{}}
	kv, err := mvcc.Open(path, mvcc.Options{Committer: f.faults})
	if err != nil {
		tb.Fatalf("mvcc.Open(%s) = %v", path, err)
	}
	f.kv = kv
	f.store, err = mvcc.Observe(kv, func(rev int64) *watch.Store { return watch.New(kv, rev, watch.Options{}) })
	if err != nil {
		tb.Fatalf("mvcc.Observe = %v", err)
	}
	f.handler = httpapi.NewHandler(httpapi.Config{KV: kv, Store: f.store, Logger: zerolog.Nop()})
	f.http = httptest.NewServer(f.handler)
	f.server = &server{URL: f.http.URL, tb: tb, client: &http.Client{Timeout: requestTimeout}, streams: &http.Client{Transport: &http.Transport{}}}
	tb.Cleanup(f.close)
	return f
}

// close shuts down as the server does: the watch streams, HTTP, the
// watch store, then the store.
func (f *inProcess) close() {
	if f.http == nil {
		return
	}
	f.handler.Close()
	f.http.Close()
	f.client.CloseIdleConnections()
	f.streams.CloseIdleConnections()
	f.store.Close()
	f.kv.Close()
	f.http = nil
}
