package client_test

import (
	"os"
	"testing"

	"github.com/httpkv/httpkv/internal/apitest"
)

// httpkvURL is the base URL of the server the examples talk to: one served
// in process, on a fresh store, for the duration of the tests.
var httpkvURL string

func TestMain(m *testing.M) {
	os.Exit(apitest.Main(m, &httpkvURL))
}
