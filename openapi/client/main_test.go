package client_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/rs/zerolog"

	"github.com/httpkv/httpkv/backend/embedded"
	"github.com/httpkv/httpkv/internal/daemon"
	"github.com/httpkv/httpkv/mvcc"
)

// httpkvURL is the base URL of the server the examples talk to: one served
// in process, on a fresh store, for the duration of the tests.
var httpkvURL string

func TestMain(m *testing.M) {
	os.Exit(runWithServer(m))
}

// runWithServer serves the API on a fresh store in a temporary directory,
// runs the tests and examples, then closes everything in reverse order.
func runWithServer(m *testing.M) int {
	dir, err := os.MkdirTemp("", "httpkv-client-example-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	cfg := daemon.Config{Listen: "127.0.0.1:0", DataDir: dir, Embedded: embedded.Options{Store: mvcc.Options{NoFsync: true}}}
	srv, err := daemon.Open(context.Background(), cfg, zerolog.Nop(), nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer srv.Close()
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	defer func() {
		stop()
		<-served
	}()
	httpkvURL = srv.URL()
	return m.Run()
}
