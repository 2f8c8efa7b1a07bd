package mvcc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// etcdServer is a single-member etcd started for one test and spoken to
// through its HTTP/JSON gRPC gateway: bytes fields travel as base64, int64
// fields as JSON strings, enums by name, and a failed call answers
// {"error": ..., "message": ..., "code": <grpc code>}.
type etcdServer struct {
	url    string
	client *http.Client
}

// lookEtcd returns the path of the etcd binary. If there is none it skips
// the test, or fails it when CI is set.
func lookEtcd(tb testing.TB) string {
	tb.Helper()
	bin, err := exec.LookPath("etcd")
	if err != nil {
		const msg = "etcd not on PATH: .ci/run must install etcd-server"
		if os.Getenv("CI") != "" {
			tb.Fatal(msg)
		}
		tb.Skip(msg)
	}
	return bin
}

// startEtcd starts the etcd at bin on free loopback ports with its data in
// a temporary directory, waits until it reports healthy, and stops it on
// cleanup.
func startEtcd(tb testing.TB, bin string) *etcdServer {
	tb.Helper()
	// The ports were free a moment before etcd binds them; another process
	// may take one meanwhile. Try again on fresh ports when it fails to
	// come up.
	const attempts = 3
	for i := 1; ; i++ {
		e, err := tryStartEtcd(tb, bin)
		if err == nil {
			return e
		}
		if i == attempts {
			tb.Fatal(err)
		}
		tb.Logf("etcd did not come up, starting it again on other ports: %v", err)
	}
}

// tryStartEtcd starts one etcd and waits for it to be healthy; on failure
// it stops it.
func tryStartEtcd(tb testing.TB, bin string) (*etcdServer, error) {
	tb.Helper()
	dir := tb.TempDir()
	addrs := freeLoopbackAddrs(tb, 2)
	clientURL, peerURL := "http://"+addrs[0], "http://"+addrs[1]
	args := []string{
		"--name", "diff",
		"--data-dir", filepath.Join(dir, "data"),
		"--listen-client-urls", clientURL,
		"--advertise-client-urls", clientURL,
		"--listen-peer-urls", peerURL,
		"--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "diff=" + peerURL,
		// A single member elects itself after one election timeout.
		"--heartbeat-interval", "10",
		"--election-timeout", "100",
		"--log-level", "error",
	}
	if etcdHasFlag(bin, "--unsafe-no-fsync") { // 3.5 and later
		args = append(args, "--unsafe-no-fsync")
	}
	logPath := filepath.Join(dir, "etcd.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		tb.Fatalf("start %s: %v", bin, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logFile.Close()
		close(exited)
	}()
	// Registered after TempDir, so it runs before the directory is removed.
	tb.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})

	e := &etcdServer{url: clientURL, client: &http.Client{Timeout: 10 * time.Second}}
	if err := e.waitHealthy(exited, 20*time.Second); err != nil {
		_ = cmd.Process.Kill()
		<-exited
		out, _ := os.ReadFile(logPath)
		return nil, fmt.Errorf("etcd at %s: %v\n%s", clientURL, err, out)
	}
	return e, nil
}

// freeLoopbackAddrs returns n distinct loopback addresses whose ports were
// free a moment ago: all are held open together, then closed.
func freeLoopbackAddrs(tb testing.TB, n int) []string {
	tb.Helper()
	addrs := make([]string, n)
	for i := range addrs {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		defer l.Close()
		addrs[i] = l.Addr().String()
	}
	return addrs
}

// etcdHasFlag reports whether etcd's help lists flag.
func etcdHasFlag(bin, flag string) bool {
	out, _ := exec.Command(bin, "--help").CombinedOutput()
	return bytes.Contains(out, []byte(flag+" "))
}

// waitHealthy polls /health until etcd has a leader and no alarm, the
// process exits, or timeout passes.
func (e *etcdServer) waitHealthy(exited <-chan struct{}, timeout time.Duration) error {
	deadline := time.After(timeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if resp, err := e.client.Get(e.url + "/health"); err == nil {
			var h struct{ Health string }
			err = json.NewDecoder(resp.Body).Decode(&h)
			resp.Body.Close()
			if err == nil && h.Health == "true" {
				return nil
			}
		}
		select {
		case <-exited:
			return fmt.Errorf("exited before becoming healthy")
		case <-deadline:
			return fmt.Errorf("not healthy after %v", timeout)
		case <-tick.C:
		}
	}
}
