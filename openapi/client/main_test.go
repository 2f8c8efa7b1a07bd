package client_test

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
	httpkvURL = srv.URL
	return m.Run()
}
