package docs

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/httpkv/httpkv/tests/e2e"
)

// tsClientDir holds the TypeScript client and its end-to-end test.
var tsClientDir = filepath.Join("..", "..", "openapi", "ts")

// TestTypeScriptClient runs the end-to-end test of the TypeScript client
// generated from the OpenAPI document (openapi/ts/test/e2e.test.ts: put,
// get, range with pagination, history, txn, leases, locks and elections,
// a stream of many watchers) under node against the real server, through
// a proxy that checks every answer with CheckReply. It needs node and `npm ci` in openapi/ts:
// without them it is skipped, or fails on CI.
func TestTypeScriptClient(t *testing.T) {
	t.Parallel()
	node := buildTSClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	front := checkingProxy(t, e2e.StartServer(t), "the TypeScript client")

	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", filepath.Join("build", "test", "e2e.test.js"))
	cmd.Dir = tsClientDir
	cmd.Env = append(os.Environ(), "HTTPKV_URL="+front.URL, "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test openapi/ts/build/test/e2e.test.js: %v\n%s", err, out)
	}
	t.Logf("node --test openapi/ts/build/test/e2e.test.js:\n%s", out)
}

// tsBuild is the TypeScript client and its tests compiled into
// openapi/ts/build, once per test process: the tests that run them
// share it.
var tsBuild struct {
	once sync.Once
	err  error
}

// buildTSClient type-checks the TypeScript client, its generated types
// and its tests, compiles them into openapi/ts/build, and returns the
// path of node. It needs node and `npm ci` in openapi/ts: without them
// the test is skipped, or fails on CI.
func buildTSClient(tb testing.TB) string {
	tb.Helper()
	node, err := exec.LookPath("node")
	tsc := filepath.Join(tsClientDir, "node_modules", ".bin", "tsc")
	if err == nil {
		_, err = os.Stat(tsc)
	}
	e2e.NeedPrograms(tb, "the TypeScript client needs node and `npm ci` in openapi/ts", err)
	tsBuild.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		build := exec.CommandContext(ctx, node, filepath.Join("node_modules", ".bin", "tsc"), "-p", ".")
		build.Dir = tsClientDir
		if out, err := build.CombinedOutput(); err != nil {
			tsBuild.err = fmt.Errorf("tsc -p openapi/ts: %v\n%s", err, out)
		}
	})
	if tsBuild.err != nil {
		tb.Fatal(tsBuild.err)
	}
	return node
}
