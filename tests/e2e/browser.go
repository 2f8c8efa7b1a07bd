package e2e

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// ChromiumPath is where the Debian package installs the browser.
const ChromiumPath = "/usr/bin/chromium"

// BrowserTimeout bounds each wait on the browser: starting it, its
// EventSource connecting and reconnecting, and its reports arriving. A
// renderer starved by two runs of the suite on two cores took over 30 s
// for what takes a second on a quiet machine; the bound is for a hang.
const BrowserTimeout = 2 * time.Minute

// RequireChromium skips the test without Chromium, unless CI is set: then
// it fails.
func RequireChromium(tb testing.TB) {
	tb.Helper()
	if _, err := os.Stat(ChromiumPath); err != nil {
		if os.Getenv("CI") != "" {
			tb.Fatalf("CI is set and %s is missing (%v): install the chromium package", ChromiumPath, err)
		}
		tb.Skipf("%s is missing (%v); install the chromium package to run this test", ChromiumPath, err)
	}
}

// StartChromium opens url in headless Chromium, in a process group of its
// own that is killed on cleanup. Without Chromium the test is skipped,
// unless it runs in CI (CI set), where it fails.
func StartChromium(tb testing.TB, url string) {
	tb.Helper()
	RequireChromium(tb)
	cmd := exec.Command(ChromiumPath,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+tb.TempDir(), url)
	out := &TailBuffer{Max: 64 << 10}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start %s: %v", ChromiumPath, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	pgid := cmd.Process.Pid
	tb.Cleanup(func() {
		// The browser's helpers share its group: end them all, and wait
		// until none is left to write to the profile directory.
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-exited
		deadline := time.Now().Add(BrowserTimeout)
		for !errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if tb.Failed() {
			tb.Logf("chromium output:\n%s", out)
		}
	})
}
