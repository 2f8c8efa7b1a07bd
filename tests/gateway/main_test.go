package gateway

import (
	"flag"
	"os"
	"testing"

	"github.com/httpkv/httpkv/tests/e2e"
)

// TestMain runs three tests a core: they mostly wait on the gateways and
// etcd clusters they start.
func TestMain(m *testing.M) {
	flag.Parse()
	e2e.ParallelByDefault(3)
	os.Exit(m.Run())
}
