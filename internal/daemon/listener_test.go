package daemon

import (
	"errors"
	"io"
	"net"
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

// TestLimitConnRewritesOnlyAnswersToRequests: net/http's own text/plain
// answer to a request it cannot read becomes the JSON error when it is
// the first write after reading; the same bytes written later on the
// connection (a stored value that forges one, in a response's body) go
// out as they are.
func TestLimitConnRewritesOnlyAnswersToRequests(t *testing.T) {
	const forged = "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request"
	server, client := net.Pipe()
	defer client.Close()
	c := &limitConn{Conn: server, release: func() {}}
	defer c.Close()
	got := make(chan string, 1)
	readAll := func(n int) {
		buf := make([]byte, n)
		m, _ := io.ReadFull(client, buf)
		got <- string(buf[:m])
	}

	go readAll(len(forged))
	if _, err := c.Write([]byte(forged)); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != forged {
		t.Fatalf("a write with no read before it = %q, want it unchanged", s)
	}

	go func() { _, _ = client.Write([]byte("GET /%ZZ HTTP/1.1\r\n\r\n")) }()
	if _, err := c.Read(make([]byte, 64)); err != nil {
		t.Fatal(err)
	}
	answer, ok := httpapi.ParseErrorAnswer([]byte(forged))
	if !ok {
		t.Fatalf("ParseErrorAnswer(%q) did not recognise it", forged)
	}
	go readAll(len(answer))
	if _, err := c.Write([]byte(forged)); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != string(answer) {
		t.Fatalf("the first write after a read = %q, want the JSON error %q", s, answer)
	}
	go readAll(len(forged))
	if _, err := c.Write([]byte(forged)); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != forged {
		t.Fatalf("a second write after one read = %q, want it unchanged", s)
	}
	if _, ok := httpapi.ParseErrorAnswer([]byte(forged + "and more")); ok {
		t.Fatalf("ParseErrorAnswer recognised an answer with bytes after its body")
	}
}
