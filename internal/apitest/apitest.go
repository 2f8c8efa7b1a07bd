// Package apitest serves the API in process, on a fresh embedded store
// in a temporary directory: the server the Go clients' examples talk to.
// It is for tests only.
package apitest

import (
	"fmt"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/rs/zerolog"

	"github.com/httpkv/httpkv/backend/embedded"
	"github.com/httpkv/httpkv/httpapi"
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
	b, err := embedded.Open(dir, embedded.Options{Store: mvcc.Options{NoFsync: true}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer b.Close()
	handler := httpapi.NewHandler(httpapi.Config{Backend: b, Auth: b.Auth(), Logger: zerolog.Nop()})
	defer handler.Close()
	srv := httptest.NewServer(handler)
	defer srv.Close()
	*url = srv.URL
	return m.Run()
}
