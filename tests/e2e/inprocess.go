package e2e

import (
	"context"
	"net/http"
	"testing"

	"github.com/httpkv/httpkv/backend/embedded"
	"github.com/httpkv/httpkv/httpapi"
	"github.com/httpkv/httpkv/internal/daemon"
	"github.com/httpkv/httpkv/mvcc/mvcctest"
	"github.com/rs/zerolog"
)

// inProcess is the API served in process, wired as the server is wired
// (daemon, which cmd/httpkv runs too), for tests that need to reach
// inside: its store's commits go through a fault injector, and its
// figures can be read.
type inProcess struct {
	*Server
	Faults  *mvcctest.Committer
	Backend *embedded.Backend
	daemon  *daemon.Server
	stop    context.CancelFunc
	served  chan error
}

// StartInProcess serves the embedded store in the data directory dir. Its
// clients may stall for StalledWriteTimeout.
func StartInProcess(tb testing.TB, dir string) *inProcess {
	tb.Helper()
	f := &inProcess{Faults: &mvcctest.Committer{}, served: make(chan error, 1)}
	d, err := daemon.Open(context.Background(), daemon.Config{Listen: "127.0.0.1:0", DataDir: dir, API: httpapi.Config{WriteTimeout: StalledWriteTimeout}}, zerolog.Nop(), f.Faults)
	if err != nil {
		tb.Fatalf("daemon.Open(%s) = %v", dir, err)
	}
	b, ok := d.Backend().(*embedded.Backend)
	if !ok {
		d.Close()
		tb.Fatalf("daemon.Open(%s) serves %T, want the embedded store", dir, d.Backend())
	}
	f.daemon, f.Backend = d, b
	ctx, stop := context.WithCancel(context.Background())
	f.stop = stop
	go func() { f.served <- d.Serve(ctx) }()
	f.Server = &Server{URL: d.URL(), TB: tb, Client: &http.Client{Timeout: RequestTimeout}, Streams: &http.Client{Transport: &http.Transport{}}}
	tb.Cleanup(f.Close)
	return f
}

// Close shuts down as the server does on SIGTERM, then closes the
// backend.
func (f *inProcess) Close() {
	if f.daemon == nil {
		return
	}
	f.stop()
	if err := <-f.served; err != nil {
		f.TB.Errorf("Serve = %v, want nil after a shutdown", err)
	}
	f.Client.CloseIdleConnections()
	f.Streams.CloseIdleConnections()
	f.daemon.Close() // after injected faults, closing the file may fail too
	f.daemon = nil
}
