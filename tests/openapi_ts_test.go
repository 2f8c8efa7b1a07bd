package tests

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// tsClientDir holds the TypeScript client and its end-to-end test.
var tsClientDir = filepath.Join("..", "openapi", "ts")

// TestTypeScriptClient runs the end-to-end test of the TypeScript client
// generated from the OpenAPI document (openapi/ts/test/e2e.test.ts: put,
// get, range with pagination, history, txn, leases, locks and elections)
// under node against the real server, through a proxy that checks every
// answer with checkReply. It needs node and `npm ci` in openapi/ts:
// without them it is skipped, or fails on CI.
func TestTypeScriptClient(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	tsc := filepath.Join(tsClientDir, "node_modules", ".bin", "tsc")
	if err == nil {
		_, err = os.Stat(tsc)
	}
	needPrograms(t, "the TypeScript client needs node and `npm ci` in openapi/ts", err)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// Type-check the client, its generated types and the test, and
	// compile them into openapi/ts/build.
	build := exec.CommandContext(ctx, node, filepath.Join("node_modules", ".bin", "tsc"), "-p", ".")
	build.Dir = tsClientDir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("tsc -p openapi/ts: %v\n%s", err, out)
	}

	front := checkingProxy(t, startServer(t), "the TypeScript client")

	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", filepath.Join("build", "test", "e2e.test.js"))
	cmd.Dir = tsClientDir
	cmd.Env = append(os.Environ(), "HTTPKV_URL="+front.URL, "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test openapi/ts/build/test/e2e.test.js: %v\n%s", err, out)
	}
	t.Logf("node --test openapi/ts/build/test/e2e.test.js:\n%s", out)
}
