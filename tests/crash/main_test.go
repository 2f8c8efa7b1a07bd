package crash

import (
	"flag"
	"os"
	"testing"

	"github.com/httpkv/httpkv/tests/e2e"
)

// TestMain runs a child role when the environment names one, and the tests
// otherwise, three a core: they mostly wait on servers restarting.
func TestMain(m *testing.M) {
	if path := os.Getenv(envCrashChild); path != "" {
		os.Exit(runCrashChild(path, os.Getenv(envCrashPrefix), os.Stdout, os.Stderr))
	}
	flag.Parse()
	e2e.ParallelByDefault(3)
	os.Exit(m.Run())
}
