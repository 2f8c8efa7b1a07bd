package docs

import (
	"flag"
	"os"
	"testing"

	"github.com/httpkv/httpkv/tests/e2e"
)

// TestMain runs two tests a core: npm and the TypeScript compiler keep a
// core busy, the README's commands mostly wait.
func TestMain(m *testing.M) {
	flag.Parse()
	e2e.ParallelByDefault(2)
	os.Exit(m.Run())
}
