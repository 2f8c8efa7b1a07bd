package tests

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// TestMalformedQuery sends requests whose query string does not parse (a
// bad percent escape, a semicolon): each answers 400 invalid_argument and
// changes nothing, where the parameter used to be dropped and the request
// run without it (a list of one key listing every key, a put with a lease
// made without it, a delete of a prefix deleting one key).
func TestMalformedQuery(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	for _, k := range []string{"a", "p/1", "p/2"} {
		s.Put(t, k, "v")
	}
	rev := s.Status(t).Revision
	for _, tt := range []struct{ method, path string }{
		{"GET", "/v1/kv?key=%ZZ"},
		{"GET", "/v1/kv?key=p/&prefix=true&page_token=%%%"},
		{"GET", "/v1/kv?key=p/;prefix=true"},
		{"GET", "/v1/kv/a?revision=%ZZ"},
		{"PUT", "/v1/kv/a?lease=%ZZ"},
		{"PUT", "/v1/kv/a?prev_kv=true&%"},
		{"DELETE", "/v1/kv/a?x=%ZZ"},
		{"DELETE", "/v1/kv?key=p/&prefix=%ZZ"},
		{"POST", "/v1/txn?%ZZ"},
		{"GET", "/v1/watch?key=%ZZ"},
	} {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			var body []byte
			if tt.method == "PUT" {
				body = []byte("changed")
			} else if tt.method == "POST" {
				body = []byte(`{"success":[{"put":{"key":"a","value":"changed"}}]}`)
			}
			s.Do(t, tt.method, tt.path, body).WantError(t, http.StatusBadRequest, "invalid_argument")
		})
	}
	if got := s.Status(t).Revision; got != rev {
		t.Errorf("the refused requests moved the revision from %d to %d", rev, got)
	}
	var l client.ListResponse
	s.Do(t, "GET", "/v1/kv?key=%00&from_key=true", nil).Ok(t, http.StatusOK, &l)
	a := s.Get(t, "a")
	if got := e2e.ListKeys(l); len(got) != 3 || e2e.ValueOf(&a) != "v" {
		t.Errorf("after the refused requests the keys are %q and a = %q, want a, p/1, p/2 unchanged", got, e2e.ValueOf(&a))
	}
}

// TestRequestIDBounded: a client's X-Request-Id goes to the log with every
// line of its request, so a long or odd one is replaced by the server's
// own; a short plain one is kept. Either is echoed.
func TestRequestIDBounded(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	for _, tt := range []struct {
		sent string
		kept bool
	}{
		{"trace-0af7651916cd43dd", true},
		{strings.Repeat("x", 64<<10), false},
		{"two words", false},
	} {
		r := s.Do(t, "GET", "/health", nil, "X-Request-Id", tt.sent)
		got := r.Header.Get("X-Request-Id")
		if tt.kept != (got == tt.sent) || got == "" || len(got) > 64 {
			t.Errorf("X-Request-Id %.40q (%d bytes) answered as %q, want it kept: %v", tt.sent, len(tt.sent), got, tt.kept)
		}
	}
}

// TestSlowBodyCutOff sends the head of a PUT and a part of its body, then
// nothing: the server answers 400 once the body has not arrived within
// its read deadline (30 s), rather than holding the request forever.
func TestSlowBodyCutOff(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	conn, err := net.Dial("tcp", s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const deadline, margin = 30 * time.Second, 15 * time.Second
	_ = conn.SetDeadline(time.Now().Add(deadline + margin))
	fmt.Fprintf(conn, "PUT /v1/kv/slow HTTP/1.1\r\nHost: %s\r\nContent-Length: 1000\r\n\r\npart of it", s.Addr)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("a PUT whose body stalls: no answer within %v: %v", deadline+margin, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a PUT whose body stalls = %s, want 400", resp.Status)
	}
	s.Do(t, "GET", "/v1/kv/slow", nil).WantError(t, http.StatusNotFound, "key_not_found")
}

// TestRequestLogBounded sends requests carrying what a client controls,
// each tens of KiB long — an X-Request-Id, a method, a path, a query
// string — to a server logging every request: no line of its log
// exceeds 512 bytes, since none of them is written as sent.
func TestRequestLogBounded(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t, "--log-level=info")
	long := strings.Repeat("x", 32<<10)
	for range 5 {
		s.Do(t, "GET", "/health", nil, "X-Request-Id", long)
		s.Do(t, "GET", "/health", nil, "X-Request-Id", "id with spaces "+long[:100])
		r, err := s.Send(t.Context(), "M"+long, "/v1/kv/k", nil)
		if err != nil || r.Status != http.StatusMethodNotAllowed {
			t.Fatalf("a 32 KiB method: %v, %v; want 405", r, err)
		}
		s.Do(t, "GET", e2e.KeyPath(long[:4<<10]), nil).WantError(t, http.StatusNotFound, "key_not_found")
		s.Do(t, "GET", "/v1/kv?key=k&junk="+long, nil)
		s.Do(t, "GET", "/no/such/"+long, nil).Want(t, http.StatusNotFound)
	}
	// A request's line is logged after its answer, and may still be in
	// the pipe to the test's copy of the server's stderr.
	e2e.Eventually(t, time.Minute, func() (bool, string) {
		logged := strings.Count(s.Stderr.String(), "\n")
		return logged >= 30, fmt.Sprintf("%d log lines for 30 requests logged at info, want one each", logged)
	})
	for line := range strings.Lines(s.Stderr.String()) {
		if len(line) > 512 {
			t.Errorf("a log line of %d bytes: %.200s...", len(line), line)
		}
	}
}

// TestUnparsableRequestAnswersJSON sends requests Go's HTTP server refuses
// before any handler runs: a malformed percent escape or a control byte in
// the path, no Host, headers over the limit, an unknown transfer coding,
// an unknown HTTP version. Each answers with its status and the contract's
// JSON error, where it used to answer net/http's text/plain "400 Bad
// Request", which a client parsing errors as JSON could not read. Nothing
// is written.
func TestUnparsableRequestAnswersJSON(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	s.Put(t, "a", "v")
	rev := s.Status(t).Revision
	big := strings.Repeat("x", 2<<20)
	for _, tt := range []struct {
		name, request string
		status        int
		code          string
	}{
		{"bad escape in the key", "GET /v1/kv/%ZZ HTTP/1.1\r\nHost: h\r\n\r\n", 400, "invalid_argument"},
		{"bad escape in a put", "PUT /v1/kv/a%zz HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n\r\nx", 400, "invalid_argument"},
		{"cut escape", "DELETE /v1/kv/a% HTTP/1.1\r\nHost: h\r\n\r\n", 400, "invalid_argument"},
		{"bad escape in a lock", "POST /v1/locks/%G0 HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\n{}", 400, "invalid_argument"},
		{"control byte", "GET /v1/kv/a\x01b HTTP/1.1\r\nHost: h\r\n\r\n", 400, "invalid_argument"},
		{"no host", "GET /v1/kv/a HTTP/1.1\r\n\r\n", 400, "invalid_argument"},
		{"header too large", "GET /v1/kv/a HTTP/1.1\r\nHost: h\r\nX-Big: " + big + "\r\n\r\n", 431, "request_too_large"},
		{"unknown transfer coding", "PUT /v1/kv/a HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n", 501, "invalid_argument"},
		{"unknown version", "GET /v1/kv/a HTTP/3.0\r\nHost: h\r\n\r\n", 505, "invalid_argument"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", s.Addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
			go func() { _, _ = io.WriteString(conn, tt.request) }()
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("%.60q: no answer: %v", tt.request, err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			var e struct {
				Error struct{ Code, Message string }
			}
			if resp.StatusCode != tt.status || resp.Header.Get("Content-Type") != "application/json; charset=utf-8" ||
				json.Unmarshal(body, &e) != nil || e.Error.Code != tt.code || e.Error.Message == "" {
				t.Errorf("%.60q = %s (%s) %q, want %d with a JSON error of code %s", tt.request, resp.Status, resp.Header.Get("Content-Type"), body, tt.status, tt.code)
			}
			if resp.ContentLength != int64(len(body)) {
				t.Errorf("%.60q: Content-Length %d, body %d bytes", tt.request, resp.ContentLength, len(body))
			}
		})
	}
	t.Run("after an answer on the same connection", func(t *testing.T) {
		conn, err := net.Dial("tcp", s.Addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		br := bufio.NewReader(conn)
		for i, req := range []string{"GET /v1/kv/a?raw=true HTTP/1.1\r\nHost: h\r\n\r\n", "GET /v1/kv/%ZZ HTTP/1.1\r\nHost: h\r\n\r\n"} {
			if _, err := io.WriteString(conn, req); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("%q: no answer: %v", req, err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			want, ct := 200, "application/octet-stream"
			if i == 1 {
				want, ct = 400, "application/json; charset=utf-8"
			}
			if resp.StatusCode != want || resp.Header.Get("Content-Type") != ct {
				t.Fatalf("%q = %s (%s) %q, want %d (%s)", req, resp.Status, resp.Header.Get("Content-Type"), body, want, ct)
			}
		}
	})
	if got := s.Status(t).Revision; got != rev {
		t.Errorf("the refused requests moved the revision from %d to %d", rev, got)
	}
	// The connection limit's wrapper leaves other answers alone.
	s.Do(t, "GET", "/v1/kv/%61", nil).Want(t, http.StatusOK)
}
