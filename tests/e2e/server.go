package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/httpkv/httpkv/openapi/client"
)

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
		_ = s.Cmd.Process.Kill()
		<-s.Exited
		s.TB.Errorf("httpkv did not exit within %v of SIGTERM; killed it; stderr:\n%s", serverStopTimeout, s.Stderr)
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

// Reply is an HTTP answer read in full.
type Reply struct {
	Req    string // "PUT /v1/kv/a", for messages
	Status int
	Header http.Header
	Body   []byte
}

// Do sends a request to the server and reads the answer. header is a list
// of name, value pairs. Every answer passes CheckReply.
func (s *Server) Do(tb testing.TB, method, path string, body []byte, header ...string) *Reply {
	tb.Helper()
	return s.DoContext(tb, context.Background(), method, path, body, header...)
}

func (s *Server) DoContext(tb testing.TB, ctx context.Context, method, path string, body []byte, header ...string) *Reply {
	tb.Helper()
	r, err := s.Send(ctx, method, path, body, header...)
	if err != nil {
		tb.Fatal(err)
	}
	CheckReply(tb, r)
	return r
}

// Send is do without the checks, and returning transport errors, for
// callers that expect them (a server being killed).
func (s *Server) Send(ctx context.Context, method, path string, body []byte, header ...string) (*Reply, error) {
	return s.SendWith(s.Client, ctx, method, path, body, header...)
}

// SendWith is send through client: s.streams, without the request
// timeout, for a request that may wait longer (a lock, a campaign) with
// ctx bounding it instead.
func (s *Server) SendWith(client *http.Client, ctx context.Context, method, path string, body []byte, header ...string) (*Reply, error) {
	if len(header)%2 != 0 {
		panic("header is a list of name, value pairs")
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.URL+path, rd)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	for i := 0; i < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading the body: %w", method, path, err)
	}
	return &Reply{Req: method + " " + path, Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

// CheckReply checks what holds for every answer of the API: it matches
// the OpenAPI document (checkDocument); a JSON body is one object with no
// key-like field next to its *_base64 twin; an error is
// {"error":{"code","message",...}}; and a header revision equals
// X-Revision.
func CheckReply(tb testing.TB, r *Reply) {
	tb.Helper()
	checkDocument(tb, r)
	isJSON := strings.HasPrefix(r.Header.Get("Content-Type"), "application/json")
	if r.Status >= 400 && !isJSON {
		tb.Fatalf("%s = %d with Content-Type %q, want an application/json error; body %q",
			r.Req, r.Status, r.Header.Get("Content-Type"), r.Body)
	}
	if !isJSON {
		return
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(r.Body, &obj); err != nil {
		tb.Fatalf("%s = %d with body %q: not a JSON object: %v", r.Req, r.Status, r.Body, err)
	}
	if r.Req == "GET /openapi.json" || r.Req == "GET /swagger.json" {
		return // the documents describe both twins of each field
	}
	if err := CheckTwins(r.Body); err != nil {
		tb.Fatalf("%s = %s: %v", r.Req, r.Body, err)
	}
	if strings.HasPrefix(r.Req, "GET /health") {
		// Health is an answer, not an error: {"health":false,...} with 503.
		var h struct {
			Health *bool `json:"health"`
		}
		if err := json.Unmarshal(r.Body, &h); err != nil || h.Health == nil || *h.Health != (r.Status == http.StatusOK) {
			tb.Fatalf("%s = %d %s, want {\"health\":true} with 200 or false with 503", r.Req, r.Status, r.Body)
		}
		return
	}
	if r.Status >= 400 {
		checkErrorBody(tb, r)
		return
	}
	raw, ok := obj["header"]
	if !ok && reflectsState(r.Req) {
		tb.Fatalf("%s = %d %s: no header", r.Req, r.Status, r.Body)
	}
	if ok {
		var h client.ResponseHeader
		if err := json.Unmarshal(raw, &h); err != nil || h.Revision <= 0 {
			tb.Fatalf("%s = %s: header %s has no positive revision", r.Req, r.Body, raw)
		}
		if got := r.Header.Get("X-Revision"); got != strconv.FormatInt(h.Revision, 10) {
			tb.Fatalf("%s: X-Revision = %q, want %d as in the body's header", r.Req, got, h.Revision)
		}
	}
}

// reflectsState reports whether a request's successful answer reflects
// the store's state, and so must carry a header.
func reflectsState(req string) bool {
	_, path, _ := strings.Cut(req, " ")
	path, _, _ = strings.Cut(path, "?")
	for _, p := range []string{"/v1/kv", "/v1/txn", "/v1/history", "/v1/leases", "/v1/compact", "/v1/status", "/v1/defrag", "/v1/alarms", "/v1/locks", "/v1/elections"} {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// checkErrorBody checks an error answer's shape: only "error" at the top,
// holding non-empty string "code" and "message".
func checkErrorBody(tb testing.TB, r *Reply) {
	tb.Helper()
	var top map[string]json.RawMessage
	if err := json.Unmarshal(r.Body, &top); err != nil || len(top) != 1 || top["error"] == nil {
		tb.Fatalf("%s = %d %s, want {\"error\":{...}} alone", r.Req, r.Status, r.Body)
	}
	var e map[string]any
	if err := json.Unmarshal(top["error"], &e); err != nil {
		tb.Fatalf("%s = %d %s: error is not an object", r.Req, r.Status, r.Body)
	}
	for _, f := range []string{"code", "message"} {
		if s, ok := e[f].(string); !ok || s == "" {
			tb.Fatalf("%s = %d %s: error.%s is not a non-empty string", r.Req, r.Status, r.Body, f)
		}
	}
}

// CheckTwins walks a JSON document and reports an object holding a field
// and its *_base64 twin both.
func CheckTwins(doc []byte) error {
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return err
	}
	var walk func(v any) error
	walk = func(v any) error {
		switch v := v.(type) {
		case map[string]any:
			for k, sub := range v {
				if strings.HasSuffix(k, "_base64") {
					if _, both := v[strings.TrimSuffix(k, "_base64")]; both {
						return fmt.Errorf("object has both %q and %q", strings.TrimSuffix(k, "_base64"), k)
					}
				}
				if err := walk(sub); err != nil {
					return err
				}
			}
		case []any:
			for _, sub := range v {
				if err := walk(sub); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(v)
}

// Want fails unless the answer has the status.
func (r *Reply) Want(tb testing.TB, status int) *Reply {
	tb.Helper()
	if r.Status != status {
		tb.Fatalf("%s = %d %s, want %d", r.Req, r.Status, bytes.TrimSpace(r.Body), status)
	}
	return r
}

// Decode unmarshals the body into v.
func (r *Reply) Decode(tb testing.TB, v any) {
	tb.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		tb.Fatalf("%s = %s: decoding into %T: %v", r.Req, r.Body, v, err)
	}
}

// Ok checks the status and decodes the body into v, if not nil.
func (r *Reply) Ok(tb testing.TB, status int, v any) *Reply {
	tb.Helper()
	r.Want(tb, status)
	if v != nil {
		r.Decode(tb, v)
	}
	return r
}

// WantError fails unless the answer is the error with the status and code,
// and returns it.
func (r *Reply) WantError(tb testing.TB, status int, code string) client.ErrorBody {
	tb.Helper()
	var body client.ErrorResponse
	if r.Status != status || json.Unmarshal(r.Body, &body) != nil || string(body.Error.Code) != code {
		tb.Fatalf("%s = %d %s, want %d with code %q", r.Req, r.Status, bytes.TrimSpace(r.Body), status, code)
	}
	return body.Error
}

// Revision returns the answer's header revision, which it must have.
func (r *Reply) Revision(tb testing.TB) int64 {
	tb.Helper()
	var body struct {
		Header *client.ResponseHeader `json:"header"`
	}
	r.Decode(tb, &body)
	if body.Header == nil {
		tb.Fatalf("%s = %s: no header", r.Req, r.Body)
	}
	return body.Header.Revision
}

// The answers are decoded into the generated client's types, loosely
// (extensions are allowed), so that the wire format is written down once.

// KeyOf returns the key's bytes from whichever form it came in.
func KeyOf(kv *client.KeyValue) string {
	if kv.Key != nil {
		return *kv.Key
	}
	if kv.KeyBase64 != nil {
		return string(*kv.KeyBase64)
	}
	return ""
}

// ValueOf returns the value's bytes from whichever form it came in.
func ValueOf(kv *client.KeyValue) string {
	if kv.Value != nil {
		return *kv.Value
	}
	if kv.ValueBase64 != nil {
		return string(*kv.ValueBase64)
	}
	return ""
}

// KVString shows a key-value for a failure message.
func KVString(kv *client.KeyValue) string {
	return fmt.Sprintf("{%q=%q create=%d mod=%d version=%d lease=%d}",
		KeyOf(kv), ValueOf(kv), kv.CreateRevision, kv.ModRevision, kv.Version, kv.Lease)
}

// KeyPath returns /v1/kv/ and key with every byte but the unreserved ones
// percent-encoded, "/" included.
func KeyPath(key string) string {
	const unreserved = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
	var b strings.Builder
	b.WriteString("/v1/kv/")
	for i := 0; i < len(key); i++ {
		if strings.IndexByte(unreserved, key[i]) >= 0 {
			b.WriteByte(key[i])
		} else {
			fmt.Fprintf(&b, "%%%02X", key[i])
		}
	}
	return b.String()
}

// Put writes key=value and returns the put's revision.
func (s *Server) Put(tb testing.TB, key, value string) int64 {
	tb.Helper()
	var res client.PutResponse
	s.Do(tb, "PUT", KeyPath(key), []byte(value)).Ok(tb, http.StatusOK, &res)
	return res.Header.Revision
}

// Get reads key at the current revision; it must exist.
func (s *Server) Get(tb testing.TB, key string) client.KeyValue {
	tb.Helper()
	var res client.GetResponse
	s.Do(tb, "GET", KeyPath(key), nil).Ok(tb, http.StatusOK, &res)
	return res.Kv
}

// Status returns GET /v1/status.
func (s *Server) Status(tb testing.TB) client.Status {
	tb.Helper()
	var st client.Status
	s.Do(tb, "GET", "/v1/status", nil).Ok(tb, http.StatusOK, &st)
	return st
}

// Txn posts a txn given as a JSON document and returns its answer.
func (s *Server) Txn(tb testing.TB, doc string) *Reply {
	tb.Helper()
	return s.Do(tb, "POST", "/v1/txn", []byte(doc), "Content-Type", "application/json")
}

// JSONString quotes s as a JSON string.
func JSONString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Eventually polls cond every 10ms until it holds or timeout passes, and
// fails with what cond last said.
func Eventually(tb testing.TB, timeout time.Duration, cond func() (bool, string)) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("not within %v: %s", timeout, why)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Deref returns what p points to, or the zero value when it is nil: the
// optional fields of the generated types read as their absence.
func Deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
