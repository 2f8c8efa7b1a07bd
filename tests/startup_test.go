package tests

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/httpkv/httpkv/tests/e2e"
)

// runToExit runs the server binary on the data directory until it exits
// by itself, and returns its exit code and stderr. It fails the test if
// the binary is still running after timeout.
func runToExit(tb testing.TB, dataDir string, timeout time.Duration) (int, string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, e2e.ServerBinary(tb), "--listen", "127.0.0.1:0", "--data-dir", dataDir, "--log-level=warn")
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		tb.Fatalf("httpkv on a bad data dir still ran after %v; stderr:\n%s", timeout, stderr.String())
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		tb.Fatalf("running httpkv: %v", err)
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// fileState is what a test checks to tell that a file was not touched.
func fileState(tb testing.TB, path string) string {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		tb.Fatal(err)
	}
	return fmt.Sprintf("%d bytes, modified %v, sha256 %x", len(b), st.ModTime(), sha256.Sum256(b))
}

// TestStartupTruncatedDataFile truncates the data file of a stopped
// server: starting on it exits non-zero at once saying so, with the
// file's size and the size its meta page needs, instead of crashing
// (SIGBUS) inside the storage engine, and leaves the file as it was.
func TestStartupTruncatedDataFile(t *testing.T) {
	t.Parallel()
	e2e.EmbeddedOnly(t, "it truncates the data file, which a gateway to etcd has none of")
	s := e2e.StartServer(t)
	value := strings.Repeat("v", 4096)
	for i := range 300 {
		s.Put(t, fmt.Sprintf("k%03d", i), value)
	}
	s.Stop()
	path := filepath.Join(s.DataDir, "httpkv.db")
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	// bbolt grows the file ahead of the pages in use, so cut well inside
	// those: 300 values of 4 KiB need more than 1 MiB.
	cut := min(st.Size()/2, 64<<10)
	if err := os.Truncate(path, cut); err != nil {
		t.Fatal(err)
	}
	before := fileState(t, path)

	code, stderr := runToExit(t, s.DataDir, e2e.ServerStartTimeout)
	if code == 0 || strings.Contains(stderr, "SIGBUS") || strings.Contains(stderr, "panic") {
		t.Fatalf("httpkv on a truncated file exited %d; stderr:\n%s\nwant a non-zero exit with a message, no crash", code, stderr)
	}
	m := regexp.MustCompile(`truncated: (\d+) bytes, meta says (\d+)`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("stderr of httpkv on a truncated file:\n%s\nwant \"truncated: N bytes, meta says M\"", stderr)
	}
	if n, _ := strconv.ParseInt(m[1], 10, 64); n != cut {
		t.Errorf("the message says %s bytes, the file has %d", m[1], cut)
	}
	if need, _ := strconv.ParseInt(m[2], 10, 64); need <= cut || need > st.Size() {
		t.Errorf("the message says the meta needs %s bytes, want more than %d and at most the %d the file had", m[2], cut, st.Size())
	}
	if after := fileState(t, path); after != before {
		t.Errorf("the truncated file changed: %s, was %s", after, before)
	}
}

// TestStartupDataDirLocked starts a second server on the data directory
// of a running one: it exits non-zero at once, naming the process that
// holds the directory, and the first goes on serving.
func TestStartupDataDirLocked(t *testing.T) {
	t.Parallel()
	e2e.EmbeddedOnly(t, "it locks the data directory, which a gateway to etcd has none of")
	s := e2e.StartServer(t)
	s.Put(t, "k", "v")
	// The put reaches the data file from the write-ahead log at the next
	// checkpoint, which a lease grant (a write outside the history)
	// makes at once: the file stays as it is from then on.
	s.Do(t, "POST", "/v1/leases", []byte(`{"ttl":600}`)).Want(t, http.StatusCreated)
	path := filepath.Join(s.DataDir, "httpkv.db")
	before := fileState(t, path)

	// Well under bbolt's own 5 second wait for the lock.
	code, stderr := runToExit(t, s.DataDir, 4*time.Second)
	want := fmt.Sprintf("locked by another process (pid %d)", s.Cmd.Process.Pid)
	if code == 0 || !strings.Contains(stderr, want) {
		t.Fatalf("a second httpkv on the data dir exited %d; stderr:\n%s\nwant a non-zero exit saying %q", code, stderr, want)
	}
	if after := fileState(t, path); after != before {
		t.Errorf("the data file changed: %s, was %s", after, before)
	}
	if got := s.Get(t, "k"); e2e.ValueOf(&got) != "v" {
		t.Fatalf("the first server reads k = %q after the second failed, want v", e2e.ValueOf(&got))
	}
}
