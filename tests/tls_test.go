package tests

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/httpkv/httpkv/tests/e2e"
)

// TestTLS serves over HTTPS with a certificate made for the test: plain
// requests and watch streams work over HTTP/2 and over HTTP/1.1, and
// SIGTERM ends both streams with a canceled message.
func TestTLS(t *testing.T) {
	t.Parallel()
	srv := startTLSServer(t)
	base, cmd := srv.base, srv.cmd
	h2 := srv.client(true)
	h2.Timeout = 10 * time.Second
	h1 := srv.client(false)

	e2e.Eventually(t, 15*time.Second, func() (bool, string) {
		resp, err := h2.Get(base + "/health")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK && resp.ProtoMajor == 2, "GET /health: " + resp.Proto + " " + resp.Status
	})
	req, _ := http.NewRequest(http.MethodPut, base+"/v1/kv/secure", strings.NewReader("yes"))
	if resp, err := h2.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT over HTTP/2 = %v, %v", resp, err)
	}
	resp, err := h2.Get(base + "/v1/kv/secure?raw=true")
	if err != nil {
		t.Fatalf("GET over HTTP/2: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "yes" || resp.ProtoMajor != 2 {
		t.Fatalf("GET over %s = %q, want \"yes\" over HTTP/2", resp.Proto, body)
	}
	// A backup over HTTP/2, trusting the certificate with --cacert, and
	// refused without it.
	dir := t.TempDir()
	backup := filepath.Join(dir, "backup.snapshot")
	if out := e2e.MustRunHTTPKV(t, nil, "snapshot", "save", "--url", base, "--cacert", srv.certFile, backup); !strings.Contains(out, "saved revision") {
		t.Errorf("snapshot save over HTTPS printed %q, want \"saved revision ...\"", out)
	}
	if info := e2e.SnapshotStatus(t, backup); info.Keys != 1 {
		t.Errorf("snapshot saved over HTTPS holds %d keys, want 1", info.Keys)
	}
	if _, _, err := e2e.RunHTTPKV(t, nil, "snapshot", "save", "--url", base, filepath.Join(dir, "untrusted.snapshot")); err == nil {
		t.Error("snapshot save over HTTPS without --cacert succeeded, want the certificate refused")
	}
	// The data commands trust it with --cacert too.
	if got := cliOK(t, base, "", "get", "secure", "-o", "value", "--cacert", srv.certFile); got != "yes" {
		t.Errorf("get over HTTPS with --cacert = %q, want yes", got)
	}
	cliFails(t, base, 1, "certificate", "get", "secure")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	streams := map[string]*bufio.Reader{}
	for name, c := range map[string]*http.Client{"HTTP/2.0": h2, "HTTP/1.1": h1} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/watch?key=w", nil)
		c := *c
		c.Timeout = 0
		resp, err := c.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("watch over %s = %v, %v", name, resp, err)
		}
		if got := resp.Proto; got != name {
			t.Fatalf("watch asked for over %s came over %s", name, got)
		}
		streams[name] = bufio.NewReader(resp.Body)
		waitLine(t, name, streams[name], "event: created")
	}
	req, _ = http.NewRequest(http.MethodPut, base+"/v1/kv/w", strings.NewReader("v"))
	if resp, err := h2.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT w = %v, %v", resp, err)
	}
	for name, r := range streams {
		waitLine(t, name, r, `"key":"w"`)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for name, r := range streams {
		waitLine(t, name, r, `event: canceled`)
	}
}

// tlsServer is httpkv serving HTTPS with a certificate made for the test.
type tlsServer struct {
	base     string // https://127.0.0.1:port
	pool     *x509.CertPool
	certFile string // the server's certificate, PEM
	cmd      *exec.Cmd
	exited   chan error // receives the process's exit once it has exited
}

// startTLSServer starts httpkv over HTTPS with extraArgs; it is killed on
// cleanup if it still runs.
func startTLSServer(t *testing.T, extraArgs ...string) *tlsServer {
	t.Helper()
	dir := t.TempDir()
	certFile, keyFile, pool := writeTestCert(t, dir)
	args := append([]string{"--listen", "127.0.0.1:0", "--data-dir", filepath.Join(dir, "data"),
		"--unsafe-no-fsync", "--log-level=warn", "--tls-cert-file", certFile, "--tls-key-file", keyFile}, extraArgs...)
	cmd := exec.Command(e2e.ServerBinary(t), args...)
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &e2e.TailBuffer{Max: 64 << 10}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start httpkv with TLS: %v", err)
	}
	exited := make(chan error, 1)
	done := make(chan struct{})
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("httpkv stderr (the end of it):\n%s", stderr)
		}
	})
	lines := bufio.NewReader(stdout)
	first, err := lines.ReadString('\n')
	go func() {
		_, _ = io.Copy(io.Discard, lines)
		exited <- cmd.Wait()
		close(done)
	}()
	m := regexp.MustCompile(`serving on (https://\S+)`).FindStringSubmatch(first)
	if err != nil || m == nil {
		t.Fatalf("httpkv printed %q (%v), want \"... serving on https://<addr>\"; stderr: %s", first, err, stderr)
	}
	return &tlsServer{base: m[1], pool: pool, certFile: certFile, cmd: cmd, exited: exited}
}

// client returns a client of the server over HTTP/2, or HTTP/1.1 only,
// without a timeout.
func (s *tlsServer) client(http2 bool) *http.Client {
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: s.pool}, ForceAttemptHTTP2: true}
	if !http2 {
		tr.ForceAttemptHTTP2 = false
		tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	}
	return &http.Client{Transport: tr}
}

// waitLine reads r until a line contains want.
func waitLine(t *testing.T, name string, r *bufio.Reader, want string) {
	t.Helper()
	done := make(chan string, 1)
	go func() {
		var seen strings.Builder
		for {
			line, err := r.ReadString('\n')
			seen.WriteString(line)
			if strings.Contains(line, want) {
				done <- ""
				return
			}
			if err != nil {
				done <- seen.String() + " (" + err.Error() + ")"
				return
			}
		}
	}()
	select {
	case miss := <-done:
		if miss != "" {
			t.Fatalf("watch over %s ended without %q: %s", name, want, miss)
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("watch over %s: no %q within 15s", name, want)
	}
}

// writeTestCert writes a self-signed certificate for 127.0.0.1 and its key,
// and returns a pool that trusts it.
func writeTestCert(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "httpkv test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	return certFile, keyFile, pool
}
