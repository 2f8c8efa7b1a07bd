package tests

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/httpkv/httpkv/tests/e2e"
)

// netHTTPAnswer is, to the byte, what Go's HTTP/1 server writes itself
// to a request it cannot read: 103 bytes.
const netHTTPAnswer = "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request"

// TestValueForgingNetHTTPAnswer mounts issue 24's attack on the server's
// rewrite of net/http's text/plain answers: a stored value of 65,536
// bytes of 'A' and then netHTTPAnswer (written in a Write of its own,
// after the value's first 64 KiB chunk), read raw after two pipelined
// GETs of a 1.39 MB value, with one byte of a next request sent while
// the server is blocked writing the value's first chunk (net/http reads
// it in the background). The value comes back byte for byte, in an
// answer of its Content-Length: the connection stays in step.
//
// The server's position in what it writes is read off the kernel
// (/proc/net/tcp: what the client read, what waits in its receive queue,
// what waits in the server's send queue): the byte goes out only once
// the server is inside the value's first chunk, and the answers are read
// only once the server took the byte. Where the socket buffers take more
// than the GETs before, the attack is tried again with more of them.
func TestValueForgingNetHTTPAnswer(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/net/tcp"); err != nil {
		t.Skipf("the attack is timed by /proc/net/tcp: %v", err)
	}
	// The client holds the server's writes while it times the byte:
	// slowly, on a loaded machine, so past the default --write-timeout.
	s := e2e.StartServer(t, fmt.Sprintf("--write-timeout=%v", e2e.StalledWriteTimeout))
	value := strings.Repeat("A", 64<<10) + netHTTPAnswer
	s.Put(t, "evil", value)
	s.Put(t, "big", strings.Repeat("B", 1_390_000))
	bigAnswer := answerBytes(t, s.Addr, "big")
	evilAnswer := answerBytes(t, s.Addr, "evil")
	evilHead := evilAnswer - len(value)

	for fillers := 2; fillers <= 8; fillers++ {
		a := forgery{t: t, addr: s.Addr, fillers: fillers, bigAnswer: bigAnswer, evilAnswer: evilAnswer, evilHead: evilHead}
		body, after, err := a.mount()
		if errors.Is(err, errBuffersTookAll) {
			t.Logf("%d GETs of the large value: %v; once more with one more", fillers, err)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if body != value {
			i := 0
			for i < len(body) && i < len(value) && body[i] == value[i] {
				i++
			}
			t.Fatalf("GET /v1/kv/evil?raw=true = %d bytes differing from byte %d: %q, want the value's %d bytes ending %q",
				len(body), i, body[i:min(len(body), i+400)], len(value), netHTTPAnswer)
		}
		if len(after) > 0 {
			t.Fatalf("after the value's answer, %d more bytes: %q: the connection is out of step", len(after), after)
		}
		return
	}
	t.Fatal("the socket buffers took every answer whole: the attack could not be mounted")
}

// errBuffersTookAll: the server wrote the value whole without blocking.
var errBuffersTookAll = errors.New("the socket buffers took the value's answer whole")

// forgery is one attempt at the attack, on a connection of its own.
type forgery struct {
	t                     *testing.T
	addr                  string
	fillers               int // GETs of the large value before the value's
	bigAnswer, evilAnswer int // bytes of their answers
	evilHead              int // bytes of the value's answer before the value
	conn                  net.Conn
	read                  int // bytes the client took off its socket
}

// mount sends the GETs, times the byte, and returns the value's answer's
// body and what came after it (nothing, on a connection in step).
func (a *forgery) mount() (body string, after []byte, err error) {
	t := a.t
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var err error
		// A small receive window, set before the handshake.
		_ = c.Control(func(fd uintptr) { err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		return err
	}}
	conn, err := d.Dial("tcp", a.addr)
	if err != nil {
		return "", nil, err
	}
	defer conn.Close()
	// A guard against a hang, not a timing: a loaded machine under the
	// race detector took two minutes over it.
	_ = conn.SetDeadline(time.Now().Add(10 * time.Minute))
	a.conn = conn
	get := func(key string) string { return "GET /v1/kv/" + key + "?raw=true HTTP/1.1\r\nHost: h\r\n\r\n" }
	if _, err := io.WriteString(conn, strings.Repeat(get("big"), a.fillers)+get("evil")); err != nil {
		return "", nil, err
	}
	// The stream's offsets where the server writes the value's first
	// chunk in one Write: after the answer's head and the value's first
	// bytes, flushed in one 4 KiB buffer, and before the value's last
	// 103 bytes.
	start := a.fillers * a.bigAnswer
	lo, hi := start+4096, start+a.evilHead+64<<10
	// What the client reads of the first answers while timing the byte,
	// read as answers afterwards.
	var early []byte
	deadline := time.Now().Add(time.Minute)
	last := -1
	for {
		w, rxq, _, err := a.written()
		if err != nil {
			return "", nil, err
		}
		if w >= hi {
			return "", nil, fmt.Errorf("%w: the server wrote %d of %d bytes", errBuffersTookAll, w, start+a.evilAnswer)
		}
		if w > lo {
			break // blocked inside the first chunk: the client reads nothing
		}
		if w > last {
			// A loaded machine is slow, not stuck: the minute is one
			// without progress.
			deadline = time.Now().Add(time.Minute)
		}
		if time.Now().After(deadline) {
			return "", nil, fmt.Errorf("the server wrote %d bytes, never reaching the value's first chunk at %d", w, lo)
		}
		if k := min(rxq, 16<<10, start-a.read); w == last && k > 0 {
			// The server waits for the client: let it write a little
			// more, less than the chunk, so as not to pass it.
			chunk := make([]byte, k)
			if _, err := io.ReadFull(conn, chunk); err != nil {
				return "", nil, err
			}
			early = append(early, chunk...)
			a.read += k
		}
		last = w
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := io.WriteString(conn, "G"); err != nil {
		return "", nil, err
	}
	for {
		_, _, serverRxq, err := a.written()
		if err != nil {
			return "", nil, err
		}
		if serverRxq == 0 {
			break // net/http read the byte
		}
		if time.Now().After(deadline) {
			return "", nil, errors.New("the server never read the byte")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The whole stream as answers: the GETs before, each whole, then the
	// value's. (Parsed, not skipped by the offsets above, which only time
	// the byte: a header's length may differ by a digit between answers,
	// as a gateway's revision grows.)
	br := bufio.NewReaderSize(io.MultiReader(bytes.NewReader(early), countReader{a}), 64<<10)
	for i := range a.fillers {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return "", nil, fmt.Errorf("the answer to GET %d of the large value: %w", i+1, err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK || n != resp.ContentLength {
			t.Fatalf("the answer to GET %d of the large value: %s, Content-Length %d, %d bytes of body, %v", i+1, resp.Status, resp.ContentLength, n, err)
		}
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return "", nil, fmt.Errorf("the value's answer: %w", err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", nil, fmt.Errorf("the value's answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK || resp.ContentLength != int64(len(b)) {
		t.Fatalf("the value's answer: %s, Content-Length %d, %d bytes of body", resp.Status, resp.ContentLength, len(b))
	}
	// What the server wrote after the value's answer is in: it took the
	// byte of the next request, and answers none.
	after, _ = br.Peek(br.Buffered())
	return string(b), after, nil
}

// countReader counts what the client takes off its socket after the
// attack's start.
type countReader struct{ a *forgery }

func (c countReader) Read(p []byte) (int, error) {
	n, err := c.a.conn.Read(p)
	c.a.read += n
	return n, err
}

// written returns how much of the stream the server has written (what
// the client read, and what waits in the client's receive queue and in
// the server's send queue), what waits in the client's receive queue,
// and what waits unread in the server's.
//
// The kernel writes /proc/net/tcp a page at a time as it is read, so a
// read while other connections come and go can miss a line: a connection
// not found is looked for again, up to a second.
func (a *forgery) written() (w, clientRxq, serverRxq int, err error) {
	for deadline := time.Now().Add(time.Second); ; time.Sleep(time.Millisecond) {
		w, clientRxq, serverRxq, err = a.writtenOnce()
		if !errors.Is(err, errNotListed) || time.Now().After(deadline) {
			return w, clientRxq, serverRxq, err
		}
	}
}

// errNotListed: a read of /proc/net/tcp did not list both ends.
var errNotListed = errors.New("not in /proc/net/tcp")

func (a *forgery) writtenOnce() (w, clientRxq, serverRxq int, err error) {
	client := a.conn.LocalAddr().(*net.TCPAddr).Port
	server := a.conn.RemoteAddr().(*net.TCPAddr).Port
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return 0, 0, 0, err
	}
	found := 0
	var serverTxq int
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		local, remote := portOf(f[1]), portOf(f[2])
		tx, rx, ok := strings.Cut(f[4], ":")
		if !ok {
			continue
		}
		txq, _ := strconv.ParseInt(tx, 16, 64)
		rxq, _ := strconv.ParseInt(rx, 16, 64)
		switch {
		case local == client && remote == server:
			clientRxq = int(rxq)
			found++
		case local == server && remote == client:
			serverTxq, serverRxq = int(txq), int(rxq)
			found++
		}
	}
	if found != 2 {
		return 0, 0, 0, fmt.Errorf("the connection %d-%d: %w", client, server, errNotListed)
	}
	return a.read + clientRxq + serverTxq, clientRxq, serverRxq, nil
}

// portOf reads the port of an address of /proc/net/tcp: "0100007F:1F90".
func portOf(addr string) int {
	_, hex, _ := strings.Cut(addr, ":")
	p, _ := strconv.ParseInt(hex, 16, 32)
	return int(p)
}

// answerBytes returns the size, head and body, of the answer to a raw
// GET of key.
func answerBytes(tb testing.TB, addr, key string) int {
	tb.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Minute))
	if _, err := io.WriteString(conn, "GET /v1/kv/"+key+"?raw=true HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"); err != nil {
		tb.Fatal(err)
	}
	b, err := io.ReadAll(conn)
	if err != nil {
		tb.Fatal(err)
	}
	// Connection: close adds a header the pipelined answers do not have.
	const closeHeader = "Connection: close\r\n"
	if !bytes.Contains(b, []byte(closeHeader)) {
		tb.Fatalf("the answer to GET %s has no %q", key, closeHeader)
	}
	return len(b) - len(closeHeader)
}
