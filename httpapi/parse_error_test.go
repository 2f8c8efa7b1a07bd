package httpapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/httpkv/httpkv/wire"
)

// TestParseErrorAnswerLeavesHandlersAlone: the router's own answers, 4xx
// included, pass through ParseErrorAnswer unchanged, byte for byte as a
// connection writes them; net/http's own answer to a path it cannot read
// becomes a JSON error.
func TestParseErrorAnswerLeavesHandlersAlone(t *testing.T) {
	h, _ := newTestHandler(t, Config{})
	srv := httptest.NewUnstartedServer(h)
	var mu sync.Mutex
	var writes [][]byte
	var rewritten int
	srv.Listener = &recordingListener{Listener: srv.Listener, record: func(b []byte) {
		mu.Lock()
		defer mu.Unlock()
		writes = append(writes, bytes.Clone(b))
		if _, ok := ParseErrorAnswer(b); ok {
			rewritten++
		}
	}}
	srv.Start()
	defer srv.Close()
	for _, req := range []string{
		"GET /v1/kv/missing HTTP/1.1\r\nHost: h\r\n\r\n",
		"PATCH /v1/kv/a HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
		"GET /v1/kv?limit=0 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
		"GET /nowhere HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
		"PUT /v1/kv/a HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nConnection: close\r\n\r\nv",
	} {
		rawRoundTrip(t, srv.Listener.Addr().String(), req)
	}
	mu.Lock()
	defer mu.Unlock()
	if rewritten != 0 || len(writes) == 0 {
		t.Errorf("%d of %d writes of handler answers would be rewritten, want none", rewritten, len(writes))
	}
	mu.Unlock()
	resp, body := rawRoundTrip(t, srv.Listener.Addr().String(), "GET /v1/kv/%ZZ HTTP/1.1\r\nHost: h\r\n\r\n")
	mu.Lock()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("GET /v1/kv/%%ZZ = %s, want 400", resp.Status)
	}
	answer, ok := ParseErrorAnswer(writes[len(writes)-1])
	if !ok {
		t.Fatalf("net/http's answer %q to GET /v1/kv/%%ZZ is not recognised", body)
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(answer)), nil)
	if err != nil {
		t.Fatalf("ParseErrorAnswer(%q) = %q, not an HTTP answer: %v", writes[len(writes)-1], answer, err)
	}
	b, _ := io.ReadAll(resp.Body)
	var e wire.ErrorResponse
	if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(b, &e) != nil || e.Error.Code != "invalid_argument" {
		t.Errorf("ParseErrorAnswer(%q) = %q, want a 400 invalid_argument JSON error", writes[len(writes)-1], answer)
	}
}

type recordingListener struct {
	net.Listener
	record func([]byte)
}

func (l *recordingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &recordingConn{Conn: c, record: l.record}, nil
}

type recordingConn struct {
	net.Conn
	record func([]byte)
}

func (c *recordingConn) Write(b []byte) (int, error) {
	c.record(b)
	return c.Conn.Write(b)
}

func rawRoundTrip(t *testing.T, addr, req string) (*http.Response, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("%q: %v", strings.SplitN(req, "\r\n", 2)[0], err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}
