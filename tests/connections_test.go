package tests

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/httpkv/httpkv/tests/e2e"
)

// rawRequest sends req (a request line) on a new connection to s and
// reads the answer's head: its status, and whether it closes the
// connection. The connection stays open for the caller to close.
func rawRequest(tb testing.TB, addr, req string) (int, bool, net.Conn) {
	tb.Helper()
	c, err := net.DialTimeout("tcp", addr, e2e.RequestTimeout)
	if err != nil {
		tb.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(e2e.RequestTimeout))
	fmt.Fprintf(c, "%s HTTP/1.1\r\nHost: x\r\n\r\n", req)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		c.Close()
		tb.Fatalf("%s: %v", req, err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		if !strings.Contains(string(b), `"code":"too_many_requests"`) && resp.StatusCode == http.StatusTooManyRequests {
			tb.Fatalf("%s: 429 with body %s, want the API's too_many_requests", req, b)
		}
	}
	_ = c.SetDeadline(time.Time{})
	return resp.StatusCode, resp.Close, c
}

// TestConnectionsFromDescriptorLimit: one client opening streams until it
// is refused cannot take the server's descriptors. Started with a limit
// of 512 open files (HTTPKV_TEST_OPEN_FILES, to run it at another), the
// server accepts at most 384 connections (the limit less its headroom)
// and 288 streams (three quarters of them; 10,000 for one client at
// most); the next stream answers 429 too_many_requests and closes its
// connection; /health answers throughout; with every connection taken, a
// spare one still answers /health, and anything else on it 429; and the
// server never runs out of descriptors. (Before, --max-connections was
// 20000 whatever the limit, and one client's 19,900 streams took every
// descriptor: accept failed with "too many open files" and /health timed
// out.)
func TestConnectionsFromDescriptorLimit(t *testing.T) {
	t.Parallel()
	openFiles := 512
	if v := os.Getenv("HTTPKV_TEST_OPEN_FILES"); v != "" {
		var err error
		if openFiles, err = strconv.Atoi(v); err != nil || openFiles < 256 {
			t.Fatalf("HTTPKV_TEST_OPEN_FILES=%q: want a number of at least 256", v)
		}
	}
	maxConns := openFiles - max(128, openFiles/16)
	maxStreams := min(maxConns*3/4, 16384, 10000)
	s := startServerUnder(t, []string{"prlimit", fmt.Sprintf("--nofile=%d:%d", openFiles, openFiles), "--"})
	before := s.RSS(t)
	var conns []net.Conn
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	start := time.Now()
	streams, refused := 0, 0
	for refused == 0 || streams+refused < min(maxStreams+100, maxConns) {
		status, closes, c := rawRequest(t, s.Addr, "GET /v1/watch?key=a")
		if status == http.StatusTooManyRequests {
			c.Close()
			if !closes {
				t.Fatalf("a stream refused past the bound keeps its connection open")
			}
			refused++
			continue
		}
		if status != http.StatusOK || streams >= maxStreams {
			t.Fatalf("stream %d: status %d, want 200 up to %d streams", streams+1, status, maxStreams)
		}
		conns = append(conns, c)
		streams++
	}
	opened := time.Since(start)
	healthStart := time.Now()
	s.Do(t, "GET", "/health", nil).Want(t, http.StatusOK)
	t.Logf("limit of %d open files: one client opened %d streams, %d more answered 429, in %v; /health answered in %v; resident memory %d MB, then %d MB",
		openFiles, streams, refused, opened.Round(time.Millisecond), time.Since(healthStart).Round(time.Millisecond), before>>20, s.RSS(t)>>20)
	if streams != maxStreams {
		t.Fatalf("one client opened %d streams, want %d", streams, maxStreams)
	}

	// The rest of the connections: bodies that never arrive, each held
	// for 30 s; then new connections until one is past the limit.
	for len(conns) < maxConns {
		c, err := net.DialTimeout("tcp", s.Addr, e2e.RequestTimeout)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "PUT /v1/kv/f HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n")
		conns = append(conns, c)
	}
	for i := 0; ; i++ {
		status, _, c := rawRequest(t, s.Addr, "GET /v1/kv/a")
		if status == http.StatusTooManyRequests {
			c.Close()
			break // a spare connection
		}
		if status != http.StatusNotFound || i > 64 {
			t.Fatalf("GET /v1/kv/a on connection %d: %d, want 404 until every connection is taken, then 429", len(conns)+1, status)
		}
		conns = append(conns, c) // it held a connection the fillers had not reached yet
	}
	// A connection can come free meanwhile (a filler or an idle client
	// timed out on a slow machine); one answered that way is held too.
	for i := 0; ; i++ {
		status, closes, c := rawRequest(t, s.Addr, "GET /health")
		if status == http.StatusOK && closes {
			c.Close()
			break
		}
		if status != http.StatusOK || i > 64 {
			t.Fatalf("GET /health with every connection taken: %d (closes: %v), want 200 on a spare connection that closes", status, closes)
		}
		conns = append(conns, c)
	}
	if strings.Contains(s.Stderr.String(), "too many open files") {
		t.Fatalf("the server ran out of descriptors:\n%s", s.Stderr)
	}
}
