package tests

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/httpkv/httpkv/"

// deps returns the packages pkg imports, directly or not (its tests'
// imports apart), as go list -deps reports them.
func deps(tb testing.TB, pkg string) []string {
	tb.Helper()
	// go test puts the go command of its toolchain first in PATH.
	out, err := exec.Command("go", "list", "-deps", module+pkg).CombinedOutput()
	if err != nil {
		tb.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
	}
	return strings.Fields(string(out))
}

// TestLayers checks the direction of imports docs/design.md draws: the
// API depends on the backend interface it declares and on the domain
// types, never on a storage package; the watch scheduler knows nothing of
// the store it is fed from; and nothing below the API knows HTTP.
func TestLayers(t *testing.T) {
	t.Parallel()
	api := deps(t, "httpapi")
	for _, storage := range []string{"mvcc", "watch", "lease", "compactor", "snapshot", "backend/embedded", "backend/etcd"} {
		if slices.Contains(api, module+storage) {
			t.Errorf("httpapi imports %s: it must reach the store through its Backend interface only", storage)
		}
	}
	if slices.Contains(deps(t, "watch"), module+"mvcc") {
		t.Error("watch imports mvcc: the scheduler must take published revisions and a History, whatever the source")
	}
	// The gateway to etcd knows nothing of the embedded store. (Through
	// gRPC it imports net/http, which it does not use.)
	for _, embeddedOnly := range []string{"mvcc", "lease", "backend/embedded"} {
		if slices.Contains(deps(t, "backend/etcd"), module+embeddedOnly) {
			t.Errorf("backend/etcd imports %s: the gateway keeps nothing of the embedded store", embeddedOnly)
		}
	}
	for _, below := range []string{"kv", "keyrange", "mvcc", "watch", "lease", "auth", "compactor", "snapshot", "backend/embedded"} {
		if slices.Contains(deps(t, below), "net/http") {
			t.Errorf("%s imports net/http: only httpapi (and the command) may know HTTP", below)
		}
	}
}
