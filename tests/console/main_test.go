package console

import (
	"flag"
	"os"
	"testing"

	"github.com/httpkv/httpkv/tests/e2e"
)

// TestMain runs one test a core, as each keeps a renderer busy, and closes
// the Chromium the console tests share once they are done.
func TestMain(m *testing.M) {
	flag.Parse()
	e2e.ParallelByDefault(1)
	code := m.Run()
	e2e.CloseConsoleBrowser()
	os.Exit(code)
}
