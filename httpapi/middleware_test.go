package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5/middleware"
	"github.com/rs/zerolog"

	"github.com/httpkv/httpkv/backend/embedded"
	"github.com/httpkv/httpkv/internal/storetest"
	"github.com/httpkv/httpkv/kv"
)

// newLoggedHandler is newTestHandler with the handler's log kept in a
// buffer.
func newLoggedHandler(tb testing.TB) (*Handler, *bytes.Buffer) {
	tb.Helper()
	h, _ := newTestHandler(tb, Config{})
	var log bytes.Buffer
	h.cfg.Logger = zerolog.New(&log)
	return h, &log
}

// logLines returns the handler's log lines, decoded.
func logLines(tb testing.TB, log *bytes.Buffer) []map[string]any {
	tb.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(log.Bytes()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			tb.Fatalf("log line %q: %v", sc.Bytes(), err)
		}
		out = append(out, m)
	}
	return out
}

// TestMetricLabelsBounded sends requests with methods and paths of a
// client's choosing: the request counter's labels stay within fixed sets
// (a 10 KB method counts as "other"), so /metrics does not grow with them.
func TestMetricLabelsBounded(t *testing.T) {
	h, _ := newTestHandler(t, Config{})
	for i := range 50 {
		method := strings.Repeat("X", 10<<10) + fmt.Sprint(i)
		serve(t, h, method, fmt.Sprintf("/v1/kv/k%d", i), "")
		serve(t, h, "GET", fmt.Sprintf("/nowhere/%d/%s", i, strings.Repeat("p", 1000)), "")
	}
	body := mustServe(t, h, http.StatusOK, "GET", "/metrics", "").Body.String()
	if len(body) > 64<<10 {
		t.Errorf("GET /metrics is %d bytes after 100 odd requests, want at most 64 KiB", len(body))
	}
	for _, line := range strings.Split(body, "\n") {
		if len(line) > 512 {
			t.Fatalf("GET /metrics has a line of %d bytes: %.200s...", len(line), line)
		}
	}
	for _, want := range []string{
		`httpkv_http_requests_total{method="other",route="unmatched",status="405"} 50`,
		`httpkv_http_requests_total{method="GET",route="unmatched",status="404"} 50`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("GET /metrics has no line %s", want)
		}
	}
}

// TestRequestID keeps a client's X-Request-Id that is short and plain,
// and replaces any other: it goes to the log with every line of the
// request.
func TestRequestID(t *testing.T) {
	h, log := newLoggedHandler(t)
	tests := []struct {
		name, sent string
		kept       bool
	}{
		{"plain", "req-42.a_b:c/d+e=", true},
		{"64 characters", strings.Repeat("a", 64), true},
		{"65 characters", strings.Repeat("a", 65), false},
		{"100 KB", strings.Repeat("a", 100<<10), false},
		{"a space", "a b", false},
		{"a quote", `a"b`, false},
		{"a newline escape", "a\\nb", false},
		{"none", "", false},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		log.Reset()
		rec := serve(t, h, "GET", "/health", "", "X-Request-Id", tt.sent)
		got := rec.Header().Get("X-Request-Id")
		switch {
		case tt.kept && got != tt.sent:
			t.Errorf("%s: X-Request-Id %q answered as %q, want it kept", tt.name, tt.sent, got)
		case !tt.kept && (got == tt.sent || !validRequestID(got) || seen[got]):
			t.Errorf("%s: X-Request-Id %.80q answered as %q, want a new id", tt.name, tt.sent, got)
		}
		seen[got] = true
		lines := logLines(t, log)
		if len(lines) != 1 || lines[0]["request_id"] != got {
			t.Errorf("%s: log %v, want one line with request_id %q", tt.name, lines, got)
		}
	}
}

// TestServerErrorsHideInternals answers a backend failure whose text
// names a file as 503 with a fixed message; the text goes to the log only,
// with the request id.
func TestServerErrorsHideInternals(t *testing.T) {
	h, log := newLoggedHandler(t)
	const secret = "/var/lib/httpkv/httpkv.db"
	for _, err := range []error{
		fmt.Errorf("%w: write %s: input/output error", kv.ErrBackendFailed, secret),
		fmt.Errorf("mvcc: commit: %w (%s)", kv.ErrClosed, secret),
		fmt.Errorf("%w: quota of %s", kv.ErrNoSpace, secret),
		errors.New("open " + secret + ": permission denied"),
	} {
		log.Reset()
		req := httptest.NewRequest("GET", "/v1/status", nil)
		rec := httptest.NewRecorder()
		req = req.WithContext(context.WithValue(req.Context(), middleware.RequestIDKey, "the-request"))
		h.writeError(rec, req, err)
		if rec.Code < 500 || strings.Contains(rec.Body.String(), secret) || strings.Contains(rec.Body.String(), "mvcc") {
			t.Errorf("writeError(%v) = %d %s, want a 5xx without the error's text", err, rec.Code, rec.Body)
		}
		lines := logLines(t, log)
		if len(lines) != 1 || lines[0]["request_id"] != "the-request" || !strings.Contains(fmt.Sprint(lines[0]["error"]), secret) {
			t.Errorf("writeError(%v) logged %v, want one line with the error and request id", err, lines)
		}
	}
}

// fakeHealth has alarms on the first read and none on the next: what a
// concurrent disarm can make of two reads. With err, reading them fails.
type fakeHealth struct {
	reads int
	err   error
}

func (f *fakeHealth) Failed() error { return nil }
func (f *fakeHealth) Alarms(context.Context) ([]kv.Alarm, error) {
	f.reads++
	if f.err != nil {
		return nil, f.err
	}
	if f.reads == 1 {
		return []kv.Alarm{kv.AlarmNoSpace}, nil
	}
	return nil, nil
}

// TestHealthReadsAlarmsOnce: /health decides on one read of the alarms,
// which may be disarmed meanwhile.
func TestHealthReadsAlarmsOnce(t *testing.T) {
	f := &fakeHealth{}
	if got := healthReason(context.Background(), f, false); got != "ALARM NOSPACE" || f.reads != 1 {
		t.Errorf("healthReason = %q after %d reads of the alarms, want ALARM NOSPACE after 1", got, f.reads)
	}
	if got := healthReason(context.Background(), &fakeHealth{reads: 1}, false); got != "" {
		t.Errorf("healthReason without alarms = %q, want healthy", got)
	}
	if got := healthReason(context.Background(), &fakeHealth{}, true); got != "shutting down" {
		t.Errorf("healthReason while shutting down = %q", got)
	}
	down := kv.Errorf(kv.ErrUnavailable, "etcd cannot serve: of 3 members, 3 unreachable")
	if got := healthReason(context.Background(), &fakeHealth{err: down}, false); got != "backend unavailable: "+down.Message {
		t.Errorf("healthReason while the backend cannot serve = %q, want what it says", got)
	}
	if got := healthReason(context.Background(), &fakeHealth{err: errors.New("internal detail")}, false); got != "backend unavailable" {
		t.Errorf("healthReason after an unexpected error = %q, want no internals", got)
	}
}

// TestNoSniff: every answer, the API's and the console's, tells browsers
// not to guess its type.
func TestNoSniff(t *testing.T) {
	h, _ := newTestHandler(t, Config{})
	for _, target := range []string{"/health", "/v1/kv/missing", "/v1/kv?key=%ZZ", "/nowhere", "/"} {
		if got := serve(t, h, "GET", target, "").Header().Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("GET %s: X-Content-Type-Options %q, want nosniff", target, got)
		}
	}
}

// TestQueryTokenAllowed: only the streams a browser opens with
// EventSource take a token in the query.
func TestQueryTokenAllowed(t *testing.T) {
	for _, tt := range []struct {
		method, path string
		want         bool
	}{
		{"GET", "/v1/watch", true},
		{"GET", "/v1/watch/streams/abc", true},
		{"GET", "/v1/elections/jobs/leader/observe", true},
		{"POST", "/v1/watch", false},
		{"GET", "/v1/watch/streams/abc/watches", false},
		{"POST", "/v1/watch/streams", false},
		{"GET", "/v1/kv", false},
		{"GET", "/v1/kv/a", false},
		{"PUT", "/v1/kv/a", false},
		{"GET", "/v1/elections/jobs/leader", false},
		{"GET", "/v1/status", false},
	} {
		r := httptest.NewRequest(tt.method, tt.path, nil)
		if got := queryTokenAllowed(r); got != tt.want {
			t.Errorf("queryTokenAllowed(%s %s) = %v, want %v", tt.method, tt.path, got, tt.want)
		}
	}
}

// hangUpBackend fails every put as a backend does whose caller left:
// with the request's context error.
type hangUpBackend struct{ *embedded.Backend }

func (b hangUpBackend) Put(ctx context.Context, _ kv.PutRequest, _ kv.LeaseGuard) (kv.PutResult, error) {
	<-ctx.Done()
	return kv.PutResult{}, ctx.Err()
}

// TestClientHangUpIsNotAServerError: a request that fails because its
// client left (its context canceled) is counted and logged as 499, not as
// a 500 of the server's, and logs no failure.
func TestClientHangUpIsNotAServerError(t *testing.T) {
	var logs bytes.Buffer
	h := NewHandler(hangUpBackend{storetest.Open(t, embedded.Options{})}, nil, zerolog.New(&logs), Config{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("PUT", "/v1/kv/k", strings.NewReader("v")).WithContext(ctx))
	if rec.Code != statusClientClosed || rec.Body.Len() != 0 {
		t.Errorf("PUT whose client left = %d %q, want %d and no body", rec.Code, rec.Body, statusClientClosed)
	}
	body := mustServe(t, h, http.StatusOK, "GET", "/metrics", "").Body.String()
	if want := `httpkv_http_requests_total{method="PUT",route="/v1/kv/*",status="499"} 1`; !strings.Contains(body, want) {
		t.Errorf("GET /metrics has no %s:\n%s", want, grepLines(body, "httpkv_http_requests_total"))
	}
	if strings.Contains(logs.String(), "request failed") {
		t.Errorf("a hang-up logged as a failure of the server's:\n%s", logs.String())
	}
}

// grepLines returns the lines of s that start with prefix.
func grepLines(s, prefix string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// panickyBackend panics on every read.
type panickyBackend struct{ Backend }

func (panickyBackend) Range(context.Context, kv.RangeRequest) (kv.RangeResult, error) {
	panic("the backend broke")
}

// TestHandlerPanic answers a handler's panic with a 500 in the error
// format, with the request's id and the answer's other headers, logs
// the panic and the request's line, and counts it in the metrics.
func TestHandlerPanic(t *testing.T) {
	var log bytes.Buffer
	b := storetest.Open(t, embedded.Options{})
	h := NewHandler(panickyBackend{b}, nil, zerolog.New(&log), Config{})
	rec := serve(t, h, "GET", "/v1/kv/k", "", "X-Request-Id", "the-panic")
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), `"code":"internal"`) {
		t.Fatalf("a panicking handler answered %d %s, want 500 internal", rec.Code, rec.Body)
	}
	if got := rec.Header().Get("X-Request-Id"); got != "the-panic" {
		t.Errorf("X-Request-Id = %q, want the client's", got)
	}
	if got := rec.Header().Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("X-Content-Type-Options = %q, want nosniff", got)
	}
	var panicked, logged bool
	for _, l := range logLines(t, &log) {
		switch l["message"] {
		case "handler panic":
			panicked = l["request_id"] == "the-panic" && l["panic"] == "the backend broke"
		case "request":
			logged = l["request_id"] == "the-panic" && l["status"] == float64(500) && l["route"] == "/v1/kv/*"
		}
	}
	if !panicked || !logged {
		t.Errorf("logged %s; want the panic and the request's line, status 500, with its id", log.String())
	}
	metrics := serve(t, h, "GET", "/metrics", "").Body.String()
	if want := `httpkv_http_requests_total{method="GET",route="/v1/kv/*",status="500"} 1`; !strings.Contains(metrics, want) {
		t.Errorf("GET /metrics has no line %s", want)
	}
}
