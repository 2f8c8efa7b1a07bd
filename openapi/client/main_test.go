package client_test

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"

	"github.com/httpkv/httpkv/httpapi"
	"github.com/httpkv/httpkv/mvcc"
	"github.com/httpkv/httpkv/watch"
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
	kv, err := mvcc.Open(filepath.Join(dir, "httpkv.db"), mvcc.Options{NoFsync: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer kv.Close()
	store := watch.New(kv, watch.Options{})
	defer store.Close()
	handler := httpapi.NewHandler(httpapi.Config{Store: store, Logger: zerolog.Nop()})
	defer handler.Close()
	srv := httptest.NewServer(handler)
	defer srv.Close()
	httpkvURL = srv.URL
	return m.Run()
}
