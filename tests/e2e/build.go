package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// Module is the import path of this module, ending in a slash.
const Module = "github.com/httpkv/httpkv/"

// A binary of this checkout, built once per test process.
type binaryBuild struct {
	once sync.Once
	path string
	err  error
}

// serverBuild is the httpkv binary; crashBuild the same with the crash
// points of the crash tests built in; BenchBuild the load tool, beside
// the first.
var serverBuild, crashBuild, BenchBuild binaryBuild

// ServerBinary returns the path of the httpkv binary built from this
// checkout, building it on first use. It is built with -race when this
// test binary is, so that the end-to-end tests check the server too.
func ServerBinary(tb testing.TB) string {
	tb.Helper()
	return serverBuild.Get(tb, "cmd/httpkv", "")
}

// CrashBinary is ServerBinary built with -tags crashpoints: a server of
// that build kills itself where HTTPKV_TEST_CRASH_AT says
// (cmd/httpkv/crashpoint.go). It is built into a directory of its own.
func CrashBinary(tb testing.TB) string {
	tb.Helper()
	return crashBuild.Get(tb, "cmd/httpkv", "crashpoints")
}

// Get builds the command pkg with the build tags on first use and returns
// its path.
func (b *binaryBuild) Get(tb testing.TB, pkg, tags string) string {
	tb.Helper()
	b.once.Do(func() { b.path, b.err = buildCommand(pkg, tags) })
	if b.err != nil {
		tb.Fatalf("building %s: %v", pkg, b.err)
	}
	return b.path
}

// buildCommand builds the command pkg with the build tags into
// <tmp>/httpkv-e2e-<uid>/<pid>/[tags/], named as its directory. Without a
// TestMain of its own the test process cannot remove the binaries when it
// ends, so each build removes those left by processes that have ended
// instead.
func buildCommand(pkg, tags string) (string, error) {
	root := filepath.Join(os.TempDir(), fmt.Sprintf("httpkv-e2e-%d", os.Getuid()))
	if err := os.MkdirAll(root, 0o700); err != nil {
		return "", err
	}
	removeStaleBuilds(root)
	dir := filepath.Join(root, strconv.Itoa(os.Getpid()), tags)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, filepath.Base(pkg))
	args := []string{"build", "-o", bin}
	if raceEnabled() {
		args = append(args, "-race")
	}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	args = append(args, Module+pkg)
	// go test puts the go command of its toolchain first in PATH.
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return bin, nil
}

// removeStaleBuilds removes the build directories under root whose test
// process no longer runs.
func removeStaleBuilds(root string) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			_ = os.RemoveAll(filepath.Join(root, e.Name()))
		}
	}
}

// raceEnabled reports whether this test binary was built with -race.
func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}
