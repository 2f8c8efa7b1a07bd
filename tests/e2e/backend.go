package e2e

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/internal/etcdtest"
)

// EnvTestBackend selects the backend the end-to-end tests run the server
// with: "embedded" (the default) or "etcd". With etcd, every server a
// test starts is a gateway to a three-member etcd cluster of its own, on
// loopback, in a namespace of its own.
//
// A cluster per server, not one per test binary: etcd's revisions and
// compaction are the cluster's, the tests run in parallel and check exact
// revisions and compactions, and a cluster starts in about a second.
const EnvTestBackend = "HTTPKV_TEST_BACKEND"

// testBackend returns the backend the tests run against.
func testBackend(tb testing.TB) string {
	tb.Helper()
	switch b := os.Getenv(EnvTestBackend); b {
	case "", "embedded":
		return "embedded"
	case "etcd":
		return b
	default:
		tb.Fatalf("%s=%q: want embedded or etcd", EnvTestBackend, b)
		return ""
	}
}

// OnEtcd reports whether the tests run against the etcd backend.
func OnEtcd(tb testing.TB) bool { return testBackend(tb) == "etcd" }

// EmbeddedOnly skips a test of what only the embedded store has (its
// data directory, its file, its process holding the data) when the tests
// run against etcd, saying why.
func EmbeddedOnly(tb testing.TB, why string) {
	tb.Helper()
	if OnEtcd(tb) {
		tb.Skipf("embedded store only: %s", why)
	}
}

// BackendArgs returns the server's flags for the backend under test: with
// etcd, those of a gateway to a cluster started for it, which lives until
// the test ends. The server's other flags (serverArgs) say what the
// cluster needs: a gateway's quota is etcd's (--quota-backend-bytes).
func BackendArgs(tb testing.TB, serverArgs []string) []string {
	tb.Helper()
	if !OnEtcd(tb) {
		return nil
	}
	// etcd's own bounds on a txn and a request above the gateway's
	// (--max-txn-ops, --max-request-bytes), which the tests vary: the
	// gateway's are the ones that answer.
	flags := []string{"--max-txn-ops=100000", "--max-request-bytes=67108864"}
	for _, a := range serverArgs {
		if strings.HasPrefix(a, "--quota-backend-bytes=") {
			flags = append(flags, a)
		}
	}
	c := etcdtest.StartCluster(tb, 3, etcdtest.WithFlags(flags...))
	ns := make([]byte, 4)
	_, _ = rand.Read(ns)
	return []string{
		"--backend", "etcd",
		"--etcd-endpoints", strings.Join(c.Endpoints(), ","),
		"--etcd-namespace", "/e2e-" + hex.EncodeToString(ns) + "/",
		// The deployment has its cluster to itself: the tests compact,
		// defragment and disarm alarms through the API.
		"--etcd-cluster-maintenance",
	}
}
