package daemon

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/httpkv/httpkv/httpapi"
)

// TestLimitListener: at most n connections are accepted at once, a closed
// one gives its slot back (once, however often it is closed), accepted
// connections reach their socket, and Close ends a waiting Accept.
func TestLimitListener(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := newLimitListener(inner, 2)
	defer l.Close()
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	for range 3 {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	first, second := <-accepted, <-accepted
	select {
	case <-accepted:
		t.Fatal("a third connection was accepted past the limit of 2")
	case <-time.After(200 * time.Millisecond):
	}
	if _, err := first.(syscall.Conn).SyscallConn(); err != nil {
		t.Fatalf("SyscallConn of an accepted connection: %v", err)
	}
	first.Close()
	first.Close() // a second close gives back nothing more
	select {
	case third := <-accepted:
		defer third.Close()
	case <-time.After(10 * time.Second):
		t.Fatal("a closed connection did not give its slot back")
	}
	if len(l.slots) != 2 {
		t.Fatalf("%d slots taken with two connections open, want 2", len(l.slots))
	}
	second.Close()
	l.Close()
	for range accepted {
	}
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Accept after Close: %v, want net.ErrClosed", err)
	}
}

// TestNetHTTPAnswersOnlyWhenNetHTTPOwnsTheConn runs a server with the
// connection hooks over TCP. A handler's answer whose last write is
// exactly net/http's text/plain answer to a request it cannot read (a
// stored value ending so) goes out byte for byte, also when the client
// sends more bytes while it is written; net/http's own answer becomes
// the JSON error, on a new connection and on one idle after an answer.
func TestNetHTTPAnswersOnlyWhenNetHTTPOwnsTheConn(t *testing.T) {
	const forged = "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request"
	value := append(bytes.Repeat([]byte{'A'}, 64<<10), forged...)
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var answers netHTTPAnswers
	srv := &http.Server{
		Handler: answers.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", strconv.Itoa(len(value)))
			// As the API writes a large value: a chunk, flushed, then the
			// rest, which net/http writes in a Write of its own.
			_, _ = w.Write(value[:64<<10])
			_ = http.NewResponseController(w).Flush()
			_, _ = w.Write(value[64<<10:])
		})),
		ConnContext: answers.Context,
		ConnState:   answers.State,
	}
	go func() { _ = srv.Serve(newLimitListener(inner, 8)) }()
	defer srv.Close()

	conn, err := net.Dial("tcp", inner.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(conn)
	// Two answers, the next request's first byte sent while they are
	// written, then a request net/http cannot read.
	if _, err := io.WriteString(conn, "GET /v HTTP/1.1\r\nHost: h\r\n\r\nGET /v HTTP/1.1\r\nHost: h\r\n\r\nG"); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("answer %d: %v", i, err)
		}
		body, _ := io.ReadAll(resp.Body)
		if !bytes.Equal(body, value) {
			t.Fatalf("answer %d: %d bytes ending %q, want the value's %d ending %q", i, len(body), body[max(0, len(body)-120):], len(value), forged)
		}
	}
	if _, err := io.WriteString(conn, "ET /%ZZ HTTP/1.1\r\nHost: h\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	wantJSON400(t, br, "after two answers")

	fresh, err := net.Dial("tcp", inner.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	_ = fresh.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(fresh, "GET /%ZZ HTTP/1.1\r\nHost: h\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	wantJSON400(t, bufio.NewReader(fresh), "on a new connection")
}

// wantJSON400 reads an answer from br that must be the API's JSON 400.
func wantJSON400(t *testing.T, br *bufio.Reader, when string) {
	t.Helper()
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("a request net/http cannot read %s: %v", when, err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Content-Type") != "application/json; charset=utf-8" || !bytes.Contains(body, []byte(`"invalid_argument"`)) {
		t.Fatalf("a request net/http cannot read %s = %s %q, want the JSON 400", when, resp.Status, body)
	}
}

// TestParseErrorAnswerWholeOnly: an answer with bytes after net/http's
// body is not net/http's.
func TestParseErrorAnswerWholeOnly(t *testing.T) {
	const forged = "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request"
	if _, ok := httpapi.ParseErrorAnswer([]byte(forged)); !ok {
		t.Fatalf("ParseErrorAnswer(%q) did not recognise it", forged)
	}
	if _, ok := httpapi.ParseErrorAnswer([]byte(forged + "and more")); ok {
		t.Fatalf("ParseErrorAnswer recognised an answer with bytes after its body")
	}
}

// TestSpareConnections: a sixty-fourth of the limit answers /health past
// it, between 1 and 32.
func TestSpareConnections(t *testing.T) {
	for _, c := range []struct{ limit, want int }{{18750, 32}, {2, 1}, {640, 10}} {
		if n := spareConnections(c.limit); n != c.want {
			t.Errorf("spare connections of %d: %d, want %d", c.limit, n, c.want)
		}
	}
}
