package tests

import (
	"context"
	"net/http"
	"testing"

	"github.com/rs/zerolog"

	"github.com/httpkv/httpkv/backend/embedded"
	"github.com/httpkv/httpkv/internal/daemon"
	"github.com/httpkv/httpkv/mvcc/mvcctest"
)

// inProcess is the API served in process, wired as the server is wired
// (daemon, which cmd/httpkv runs too), for tests that need to reach
// inside: its store's commits go through a fault injector, and its
// figures can be read.
type inProcess struct {
	*server
	faults  *mvcctest.Committer
	backend *embedded.Backend
	daemon  *daemon.Server
	stop    context.CancelFunc
	served  chan error
}

// startInProcess serves the embedded store in the data directory dir.
func startInProcess(tb testing.TB, dir string) *inProcess {
	tb.Helper()
	f := &inProcess{faults: &mvcctest.Committer{}, served: make(chan error, 1)}
	d, err := daemon.Open(context.Background(), daemon.Config{Listen: "127.0.0.1:0", DataDir: dir}, zerolog.Nop(), f.faults)
	if err != nil {
		tb.Fatalf("daemon.Open(%s) = %v", dir, err)
	}
	b, ok := d.Backend().(*embedded.Backend)
	if !ok {
		d.Close()
		tb.Fatalf("daemon.Open(%s) serves %T, want the embedded store", dir, d.Backend())
	}
	f.daemon, f.backend = d, b
	ctx, stop := context.WithCancel(context.Background())
	f.stop = stop
	go func() { f.served <- d.Serve(ctx) }()
	f.server = &server{URL: d.URL(), tb: tb, client: &http.Client{Timeout: requestTimeout}, streams: &http.Client{Transport: &http.Transport{}}}
	tb.Cleanup(f.close)
	return f
}

// close shuts down as the server does on SIGTERM, then closes the
// backend.
func (f *inProcess) close() {
	if f.daemon == nil {
		return
	}
	f.stop()
	if err := <-f.served; err != nil {
		f.tb.Errorf("Serve = %v, want nil after a shutdown", err)
	}
	f.client.CloseIdleConnections()
	f.streams.CloseIdleConnections()
	f.daemon.Close() // after injected faults, closing the file may fail too
	f.daemon = nil
}
