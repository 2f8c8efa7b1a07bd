//go:build linux

package crash

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/httpkv/httpkv/tests/e2e"
)

// mountTmpfs mounts a tmpfs of size bytes at a new directory and returns
// it; it is unmounted on cleanup, after everything registered later. A
// process that may not mount (not root, or a container without the
// capability) skips the test, unless CI is set and it runs as root.
func mountTmpfs(tb testing.TB, size int64) string {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "disk")
	if err := os.Mkdir(dir, 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0700", size)); err != nil {
		if os.Getenv("CI") != "" && os.Geteuid() == 0 {
			tb.Fatalf("mount a tmpfs as root under CI: %v", err)
		}
		tb.Skipf("a full disk needs a small file system, and mounting a tmpfs failed: %v (run as root)", err)
	}
	tb.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			tb.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// resizeTmpfs changes the size of the tmpfs at dir.
func resizeTmpfs(tb testing.TB, dir string, size int64) {
	tb.Helper()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_REMOUNT, fmt.Sprintf("size=%d", size)); err != nil {
		tb.Fatalf("remount %s with size %d: %v", dir, size, err)
	}
}

// freeBytes is what the file system of dir has left.
func freeBytes(tb testing.TB, dir string) int64 {
	tb.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		tb.Fatal(err)
	}
	return int64(st.Bavail) * st.Bsize
}

// TestDiskFull runs the server on an 8 MiB file system (a tmpfs) and
// fills it from 8 concurrent writers, well below the quota: the commit
// that finds no room fails, its writes and every later one answer 503
// unavailable (the quota's 507 is for a backend over its configured
// size, not a failing disk), /health answers 503, and reads keep serving
// every acknowledged write. A restart on the still full disk serves them
// too and refuses writes that find no room again; once the file system
// has room and the server restarts, every acknowledged write is there at
// its revision, every revision is one whole request, and writes work.
func TestDiskFull(t *testing.T) {
	t.Parallel()
	e2e.EmbeddedOnly(t, "it fills the file system under the embedded store's data directory")
	rng := e2e.TestRand(t, "HTTPKV_DISK_FULL_SEED")
	dir := mountTmpfs(t, 8<<20)
	s := e2e.StartServerIn(t, dir, "--unsafe-no-fsync=false")
	m := newCrashModel()
	m.valueSize, m.stopOn = 4<<10, http.StatusServiceUnavailable

	fill := func(prefix string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		startCrashWriters(ctx, t, s, m, prefix, 8, rng)()
		if ctx.Err() != nil {
			t.Fatalf("8 writers of 4 KiB values did not fill %s within 2 minutes", dir)
		}
	}
	fill("fill")
	t.Logf("the disk is full after %d acknowledged writes (%d bytes free)", m.acked(), freeBytes(t, dir))
	checkFailedStore(t, s)
	m.sync(t, s)
	m.checkReadsAt(t, s, m.top)
	if t.Failed() {
		return
	}

	// Restarted on the full disk: it serves what it has, and a write
	// that finds no room fails as before.
	s.Restart()
	m.sync(t, s)
	m.checkReadsAt(t, s, m.top)
	acked := m.acked()
	fill("full")
	t.Logf("restarted on the full disk: %d more writes acknowledged before the disk was full again", m.acked()-acked)
	checkFailedStore(t, s)

	// Room again, and a restart: everything acknowledged is there.
	resizeTmpfs(t, dir, 64<<20)
	s.Restart()
	m.sync(t, s)
	m.checkReadsAt(t, s, m.top)
	s.Do(t, "GET", "/health", nil).Want(t, http.StatusOK)
	writeAcked(t, s, m, "after", 2, 100, rng)
	m.sync(t, s)

	// A defrag with no room for its copy fails, removes what it wrote,
	// and leaves the store serving writes.
	used := func() int64 {
		var st syscall.Statfs_t
		if err := syscall.Statfs(dir, &st); err != nil {
			t.Fatal(err)
		}
		return int64(st.Blocks-st.Bfree) * st.Bsize
	}
	// Writes acknowledged from the write-ahead log reach the data file
	// at the next checkpoint, which a lease grant (a write outside the
	// history) makes at once: the file has grown to hold them before
	// the room left is measured.
	s.Do(t, "POST", "/v1/leases", []byte(`{"ttl":60}`)).Want(t, http.StatusCreated)
	resizeTmpfs(t, dir, used()+1<<20)
	free := freeBytes(t, dir)
	r := s.Do(t, "POST", "/v1/defrag", nil)
	t.Logf("POST /v1/defrag with %d bytes free = %d %s", free, r.Status, r.Body)
	if r.Status < 500 {
		t.Errorf("POST /v1/defrag without room for its copy = %d %s, want an error", r.Status, r.Body)
	}
	if got := freeBytes(t, dir); got != free {
		t.Errorf("a failed defrag left %d bytes free of %d: its copy is still there", got, free)
	}
	writeAcked(t, s, m, "nodefrag", 2, 50, rng)
	m.sync(t, s)
	resizeTmpfs(t, dir, 64<<20)
	s.Do(t, "POST", "/v1/defrag", nil).Want(t, http.StatusOK)
	m.checkReadsAt(t, s, m.top)
	s.Restart()
	m.sync(t, s)
	m.checkReadsAt(t, s, m.top)
}

// checkFailedStore checks a server whose store failed to commit: writes
// answer 503 unavailable, whatever they are, and /health says why.
func checkFailedStore(tb testing.TB, s *e2e.Server) {
	tb.Helper()
	s.Do(tb, "PUT", e2e.KeyPath("small"), []byte("x")).WantError(tb, http.StatusServiceUnavailable, "unavailable")
	s.Do(tb, "POST", "/v1/leases", []byte(`{"ttl":60}`)).WantError(tb, http.StatusServiceUnavailable, "unavailable")
	r := s.Do(tb, "GET", "/health", nil)
	if r.Status != http.StatusServiceUnavailable || !strings.Contains(string(r.Body), "backend") {
		tb.Fatalf("GET /health on a full disk = %d %s, want 503 saying the backend failed", r.Status, r.Body)
	}
}
