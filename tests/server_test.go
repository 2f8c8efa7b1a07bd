package tests

import (
	"testing"

	"github.com/httpkv/httpkv/tests/e2e"
)

// benchBinary returns the path of the load tool, httpkv-bench, built from
// this checkout into the directory of ServerBinary, where `httpkv bench`
// finds it.
func benchBinary(tb testing.TB) string {
	tb.Helper()
	return e2e.BenchBuild.Get(tb, "cmd/httpkv-bench", "")
}

// startServerUnder is StartServer with the binary run by launcher (see
// server.launcher).
func startServerUnder(tb testing.TB, launcher []string, extraArgs ...string) *e2e.Server {
	tb.Helper()
	s := e2e.NewServer(tb, tb.TempDir(), e2e.BackendArgs(tb, extraArgs), extraArgs...)
	s.Launcher = launcher
	s.Start("127.0.0.1:0")
	return s
}
