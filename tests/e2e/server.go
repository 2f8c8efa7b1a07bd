package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/httpkv/httpkv/openapi/client"
)

// FreeAddr returns a loopback address whose port was free a moment ago.
func FreeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// Bounds on waiting for the server. They are generous because the server
// is built with -race when the tests are, and CI machines are slow; a
// healthy server answers well within them.
const (
	ServerStartTimeout = time.Minute
	serverStopTimeout  = 20 * time.Second
	RequestTimeout     = 30 * time.Second
	// StalledWriteTimeout is the --write-timeout of servers whose tests
	// stall a client on purpose, for as long as their writes take on a
	// loaded machine: the server's 30 s would cut it off meanwhile.
	StalledWriteTimeout = 10 * time.Minute
)

// Server is a running httpkv process with its own data directory. URL and
// DataDir stay the same across Restart. Its methods other than the HTTP
// helpers are for the test's goroutine only.
type Server struct {
	URL     string // http://127.0.0.1:port, no trailing slash
	DataDir string

	TB      testing.TB
	bin     string   // the binary of the next start; empty for ServerBinary
	Gateway bool     // a gateway to etcd: no --data-dir
	Args    []string // flags after --listen and --data-dir
	Env     []string // added to the environment of each start
	// launcher, if set, runs the binary: its command and arguments, the
	// binary and its arguments after them (prlimit, to start it with a
	// limit on open files).
	Launcher []string
	Addr     string
	Client   *http.Client // for requests, with a timeout
	Streams  *http.Client // for watch streams, without one

	Cmd     *exec.Cmd
	Exited  chan struct{} // closed when cmd has exited
	waitErr error         // set before exited is closed
	Stderr  *TailBuffer
}

// serverLine is the line httpkv prints on stdout once it listens.
var serverLine = regexp.MustCompile(`^httpkv \S+ serving on (http://\S+)$`)

// StartServer starts httpkv on a free port of 127.0.0.1 with a fresh data
// directory and waits until GET /health answers 200. By default fsync is
// off and only warnings are logged; extraArgs come after the defaults, so
// "--unsafe-no-fsync=false" or "--log-level=info" override them. The
// server is stopped with SIGTERM on cleanup, and the test fails if it
// then does not exit cleanly or reported a data race.
func StartServer(tb testing.TB, extraArgs ...string) *Server {
	tb.Helper()
	return StartServerIn(tb, tb.TempDir(), extraArgs...)
}

// StartServerIn is StartServer on the data directory dir, which may
// already hold a store.
func StartServerIn(tb testing.TB, dir string, extraArgs ...string) *Server {
	tb.Helper()
	// The backend first, so that it outlives the server at cleanup.
	return StartServerWith(tb, dir, BackendArgs(tb, extraArgs), extraArgs...)
}

// StartServerWith is StartServerIn with the backend's flags given. A
// gateway (--backend etcd) refuses the embedded store's flags: it gets
// no --data-dir, and --quota-backend-bytes and --unsafe-no-fsync in
// extraArgs are left to the cluster (BackendArgs gives its members the
// quota; they run without fsync).
func StartServerWith(tb testing.TB, dir string, backend []string, extraArgs ...string) *Server {
	tb.Helper()
	s := NewServer(tb, dir, backend, extraArgs...)
	s.Start("127.0.0.1:0")
	return s
}

// NewServer is the server StartServerWith starts, stopped at cleanup.
func NewServer(tb testing.TB, dir string, backend []string, extraArgs ...string) *Server {
	tb.Helper()
	gateway := slices.Contains(backend, "etcd")
	args := append(backend, "--log-level=warn")
	if !gateway {
		args = append(args, "--unsafe-no-fsync")
	}
	for _, a := range extraArgs {
		if !gateway || !strings.HasPrefix(a, "--quota-backend-bytes=") && !strings.HasPrefix(a, "--unsafe-no-fsync") {
			args = append(args, a)
		}
	}
	s := &Server{
		DataDir: dir,
		TB:      tb,
		Gateway: gateway,
		Args:    args,
		Client:  &http.Client{Timeout: RequestTimeout},
		Streams: &http.Client{Transport: &http.Transport{}},
	}
	tb.Cleanup(func() {
		if s.Running() {
			s.Stop()
		}
		s.Client.CloseIdleConnections()
		s.Streams.CloseIdleConnections()
		if tb.Failed() && s.Stderr != nil && s.Stderr.String() != "" {
			tb.Logf("httpkv stderr (the end of it):\n%s", s.Stderr)
		}
	})
	return s
}

// Start runs the binary listening on listen and waits until it is healthy.
func (s *Server) Start(listen string) {
	s.TB.Helper()
	args := append([]string{"--listen", listen}, s.Args...)
	if !s.Gateway {
		args = append([]string{"--listen", listen, "--data-dir", s.DataDir}, s.Args...)
	}
	bin := s.bin
	if bin == "" {
		bin = ServerBinary(s.TB)
	}
	cmd := exec.Command(bin, args...)
	if len(s.Launcher) > 0 {
		cmd = exec.Command(s.Launcher[0], append(append(s.Launcher[1:], bin), args...)...)
	}
	// A binary built with -race sleeps a second before exiting unless told
	// not to; the tests stop servers often.
	cmd.Env = append(os.Environ(), "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	cmd.Env = append(cmd.Env, s.Env...)
	firstLine := newFirstLineWriter()
	s.Stderr = &TailBuffer{Max: 64 << 10}
	cmd.Stdout, cmd.Stderr = firstLine, s.Stderr
	if err := cmd.Start(); err != nil {
		s.TB.Fatalf("start httpkv %s: %v", strings.Join(args, " "), err)
	}
	exited := make(chan struct{})
	s.Cmd, s.Exited = cmd, exited
	go func() {
		s.waitErr = cmd.Wait()
		close(exited)
	}()

	timer := time.NewTimer(ServerStartTimeout)
	defer timer.Stop()
	var line string
	select {
	case line = <-firstLine.line:
	case <-s.Exited:
		s.TB.Fatalf("httpkv %s exited (%v) before serving; stderr:\n%s", strings.Join(args, " "), s.waitErr, s.Stderr)
	case <-timer.C:
		s.TB.Fatalf("httpkv printed no address within %v; stderr:\n%s", ServerStartTimeout, s.Stderr)
	}
	m := serverLine.FindStringSubmatch(line)
	if m == nil {
		s.TB.Fatalf("httpkv printed %q, want \"httpkv <version> serving on http://<addr>\"", line)
	}
	if s.URL == "" {
		s.URL = m[1]
		s.Addr = strings.TrimPrefix(m[1], "http://")
	} else if m[1] != s.URL {
		s.TB.Fatalf("httpkv restarted on %s, want %s", m[1], s.URL)
	}
	s.waitHealthy()
}

// waitHealthy polls GET /health until it answers 200, or 503 for an
// active alarm: a server restarted over a full backend serves, and says
// so.
func (s *Server) waitHealthy() {
	s.TB.Helper()
	deadline := time.Now().Add(ServerStartTimeout)
	var last string
	for {
		resp, err := s.Client.Get(s.URL + "/health")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var h client.Health
			alarm := resp.StatusCode == http.StatusServiceUnavailable &&
				json.Unmarshal(body, &h) == nil && strings.HasPrefix(Deref(h.Reason), "ALARM")
			if resp.StatusCode == http.StatusOK || alarm {
				return
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, body)
		} else {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			s.TB.Fatalf("GET /health did not answer 200 within %v; last: %s", ServerStartTimeout, last)
		}
		select {
		case <-s.Exited:
			s.TB.Fatalf("httpkv exited (%v) while waiting for /health; stderr:\n%s", s.waitErr, s.Stderr)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Running reports whether the server's process is running.
func (s *Server) Running() bool {
	if s.Cmd == nil {
		return false
	}
	select {
	case <-s.Exited:
		return false
	default:
		return true
	}
}

// Stop sends SIGTERM and waits for the process to exit, killing it if it
// does not within serverStopTimeout. The test fails unless it exited with
// status 0 and reported no data race.
func (s *Server) Stop() {
	s.TB.Helper()
	if !s.Running() {
		s.TB.Fatalf("Stop: httpkv is not running")
	}
	// The server waits up to 5s for a connection that never sent a
	// request; the client may hold such a spare one.
	s.Client.CloseIdleConnections()
	if err := s.Cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		s.TB.Fatalf("SIGTERM httpkv: %v", err)
	}
	timer := time.NewTimer(serverStopTimeout)
	defer timer.Stop()
	select {
	case <-s.Exited:
	case <-timer.C:
		// SIGQUIT makes the Go runtime print every goroutine and exit:
		// where the shutdown hangs, kept whole.
		s.Stderr.keep(4 << 20)
		_ = s.Cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-s.Exited:
		case <-time.After(10 * time.Second):
			_ = s.Cmd.Process.Kill()
			<-s.Exited
		}
		s.TB.Errorf("httpkv did not exit within %v of SIGTERM; SIGQUIT it, its goroutines are at the end of its stderr:\n%s", serverStopTimeout, s.Stderr)
		return
	}
	if s.waitErr != nil {
		s.TB.Errorf("httpkv exited after SIGTERM with %v, want status 0; stderr:\n%s", s.waitErr, s.Stderr)
	}
	s.checkStderr()
}

// Kill sends SIGKILL and waits for the process to exit.
func (s *Server) Kill() {
	s.TB.Helper()
	if !s.Running() {
		s.TB.Fatalf("Kill: httpkv is not running")
	}
	if err := s.Cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		s.TB.Fatalf("SIGKILL httpkv: %v", err)
	}
	<-s.Exited
	if st := s.Cmd.ProcessState; st == nil || st.ExitCode() != -1 {
		s.TB.Fatalf("httpkv exited by itself (%v) before SIGKILL; stderr:\n%s", s.waitErr, s.Stderr)
	}
	s.checkStderr()
}

// Restart stops the server if it runs (SIGTERM) and starts it again on
// the same address and data directory.
func (s *Server) Restart() {
	s.TB.Helper()
	if s.Running() {
		s.Stop()
	}
	s.Client.CloseIdleConnections()
	s.Start(s.Addr)
}

// checkStderr fails the test if the server's race detector spoke.
func (s *Server) checkStderr() {
	s.TB.Helper()
	if s.Stderr.raced() {
		s.TB.Errorf("httpkv reported a data race:\n%s", s.Stderr)
	}
}

// firstLineWriter is a process's stdout that hands its first line over.
type firstLineWriter struct {
	mu   sync.Mutex
	buf  []byte
	sent bool
	line chan string
}

func newFirstLineWriter() *firstLineWriter { return &firstLineWriter{line: make(chan string, 1)} }

func (w *firstLineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.sent {
		return len(p), nil
	}
	w.buf = append(w.buf, p...)
	if i := bytes.IndexByte(w.buf, '\n'); i >= 0 {
		w.line <- string(w.buf[:i])
		w.sent, w.buf = true, nil
	}
	return len(p), nil
}

// TailBuffer keeps the last max bytes written to it, and whether a data
// race report went through it.
type TailBuffer struct {
	mu   sync.Mutex
	Max  int
	buf  []byte
	race bool
}

func (b *TailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	// Check before trimming, with enough of the previous write kept to see
	// a marker split across two writes.
	if bytes.Contains(b.buf[max(0, len(b.buf)-len(p)-32):], []byte("WARNING: DATA RACE")) {
		b.race = true
	}
	if len(b.buf) > b.Max {
		b.buf = append([]byte(nil), b.buf[len(b.buf)-b.Max:]...)
	}
	return len(p), nil
}

// keep makes the buffer keep the last n bytes from now on, if more than
// it keeps.
func (b *TailBuffer) keep(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.Max = max(b.Max, n)
}

func (b *TailBuffer) raced() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.race
}

func (b *TailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
