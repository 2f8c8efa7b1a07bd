// Package apitest serves the API in process, on a fresh embedded store
// in a temporary directory: the server the Go clients' examples talk to.
// It is for tests only.
package apitest

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

// Main serves the API, sets *url to its base URL, runs the tests and
// examples of m, then closes everything in reverse order. It returns
// the exit status for os.Exit.
func Main(m *testing.M, url *string) int {
	dir, err := os.MkdirTemp("", "httpkv-example-")
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
	*url = srv.URL()
	return m.Run()
}
