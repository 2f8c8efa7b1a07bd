//go:build linux

package tests

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/httpkv/httpkv/answer"
	"github.com/httpkv/httpkv/tests/e2e"
)

// netHTTPAnswer is, to the byte, what Go's HTTP/1 server writes itself
// to a request it cannot read: 103 bytes.
const netHTTPAnswer = "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request"

// TestValueForgingNetHTTPAnswer mounts issue 24's attack on the server's
// rewrite of net/http's text/plain answers: a stored value of 'A's and
// then netHTTPAnswer (written in a Write of its own, after the value's
// 64 KiB pieces), read raw after two pipelined GETs of a 1.39 MB value,
// with one byte of a next request sent while the server is blocked
// writing the value's pieces (net/http reads it in the background). The
// value comes back byte for byte, in an answer of its Content-Length:
// the connection stays in step.
//
// The server's position in what it writes is read off the kernel
// (socketQueues: what the client read, what waits in its receive queue,
// what waits in the server's send queue): the byte goes out only once
// the server is inside the value's pieces, and the answers are read only
// once the server took the byte. The value had one piece of 'A's;
// this one has valuePieces, as the kernel grows the server's send buffer
// in steps of 256 KiB on loopback (two segments of 128 KiB a congestion
// window), and one step taken between two looks would pass a single
// piece. Where the socket buffers take more than the GETs before, the
// attack is tried again with more of them.
func TestValueForgingNetHTTPAnswer(t *testing.T) {
	t.Parallel()
	// The client holds the server's writes while it times the byte:
	// slowly, on a loaded machine, so past the default --write-timeout.
	s := e2e.StartServer(t, fmt.Sprintf("--write-timeout=%v", e2e.StalledWriteTimeout))
	value := strings.Repeat("A", valuePieces*answer.Piece) + netHTTPAnswer
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

// valuePieces is how many pieces of 'A's the value has before
// netHTTPAnswer: 1 MiB, four of the kernel's steps in the server's send
// buffer.
const valuePieces = 16

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
	// The stream's offsets where the server writes the value's pieces:
	// after the answer's head and the value's first bytes, flushed in one
	// 4 KiB buffer, and before the value's last 103 bytes.
	start := a.fillers * a.bigAnswer
	lo, hi := start+4096, start+a.evilHead+valuePieces*answer.Piece
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
			return "", nil, fmt.Errorf("%w: the server wrote %d of %d bytes (client read %d, rxq %d)", errBuffersTookAll, w, start+a.evilAnswer, a.read, rxq)
		}
		if w > lo {
			break // blocked inside the pieces: the client reads nothing
		}
		if w > last {
			// A loaded machine is slow, not stuck: the minute is one
			// without progress.
			deadline = time.Now().Add(time.Minute)
		}
		if time.Now().After(deadline) {
			return "", nil, fmt.Errorf("the server wrote %d bytes, never reaching the value's pieces at %d", w, lo)
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
// The queues are the kernel's, asked of each socket by its addresses
// (sock_diag): an exact lookup, unlike a read of /proc/net/tcp, which
// the kernel writes a page at a time and which can miss a line while
// other connections come and go.
func (a *forgery) written() (w, clientRxq, serverRxq int, err error) {
	local, remote := a.conn.LocalAddr().(*net.TCPAddr), a.conn.RemoteAddr().(*net.TCPAddr)
	clientRxq, _, err = socketQueues(local, remote)
	if err != nil {
		return 0, 0, 0, a.gone("the client's end", err)
	}
	serverRxq, serverTxq, err := socketQueues(remote, local)
	if err != nil {
		return 0, 0, 0, a.gone("the server's end", err)
	}
	return a.read + clientRxq + serverTxq, clientRxq, serverRxq, nil
}

// gone describes a connection whose end the kernel no longer has, with
// what the client's socket says of it.
func (a *forgery) gone(end string, err error) error {
	_ = a.conn.SetReadDeadline(time.Now().Add(time.Second))
	n, rerr := a.conn.Read(make([]byte, 1))
	return fmt.Errorf("the connection %v-%v, %s: %w (a read on the client's end: %d bytes, %v)",
		a.conn.LocalAddr(), a.conn.RemoteAddr(), end, err, n, rerr)
}

// errNoSocket: the kernel has no connected socket of those addresses.
var errNoSocket = errors.New("no such socket")

// socketQueues asks the kernel (NETLINK_SOCK_DIAG, inet_diag) for the
// receive and send queues of the TCP socket bound to local and connected
// to remote: bytes received and not yet read, bytes written and not yet
// acknowledged, as /proc/net/tcp's rx_queue and tx_queue.
func socketQueues(local, remote *net.TCPAddr) (rxq, txq int, err error) {
	fd, err := syscall.Socket(syscall.AF_NETLINK, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, netlinkSockDiag)
	if err != nil {
		return 0, 0, err
	}
	defer syscall.Close(fd)
	// struct nlmsghdr, then struct inet_diag_req_v2 for the one socket
	// of these addresses (no NLM_F_DUMP: an exact lookup).
	req := make([]byte, 16+56)
	binary.NativeEndian.PutUint32(req[0:], uint32(len(req)))
	binary.NativeEndian.PutUint16(req[4:], sockDiagByFamily)
	binary.NativeEndian.PutUint16(req[6:], syscall.NLM_F_REQUEST)
	r := req[16:]
	r[0], r[1] = syscall.AF_INET, syscall.IPPROTO_TCP
	binary.NativeEndian.PutUint32(r[4:], 0xffffffff) // every state
	id := r[8:]                                      // struct inet_diag_sockid
	binary.BigEndian.PutUint16(id[0:], uint16(local.Port))
	binary.BigEndian.PutUint16(id[2:], uint16(remote.Port))
	copy(id[4:8], local.IP.To4())
	copy(id[20:24], remote.IP.To4())
	binary.NativeEndian.PutUint32(id[40:], 0xffffffff) // no cookie
	binary.NativeEndian.PutUint32(id[44:], 0xffffffff)
	if err := syscall.Sendto(fd, req, 0, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}); err != nil {
		return 0, 0, err
	}
	buf := make([]byte, 8192)
	n, _, err := syscall.Recvfrom(fd, buf, 0)
	if err != nil {
		return 0, 0, err
	}
	msgs, err := syscall.ParseNetlinkMessage(buf[:n])
	if err != nil {
		return 0, 0, err
	}
	for _, m := range msgs {
		switch m.Header.Type {
		case syscall.NLMSG_ERROR:
			if errno := -int32(binary.NativeEndian.Uint32(m.Data)); errno != 0 {
				if syscall.Errno(errno) == syscall.ENOENT {
					return 0, 0, errNoSocket
				}
				return 0, 0, syscall.Errno(errno)
			}
		case sockDiagByFamily:
			// struct inet_diag_msg: state at 1, rqueue at 56, wqueue at 60.
			// The lookup falls back to a listening socket of the local
			// address, which is not the connection.
			if len(m.Data) < 64 || m.Data[1] == tcpListen {
				return 0, 0, errNoSocket
			}
			return int(binary.NativeEndian.Uint32(m.Data[56:])), int(binary.NativeEndian.Uint32(m.Data[60:])), nil
		}
	}
	return 0, 0, errNoSocket
}

const (
	netlinkSockDiag  = 4  // NETLINK_SOCK_DIAG
	sockDiagByFamily = 20 // SOCK_DIAG_BY_FAMILY
	tcpListen        = 10 // TCP_LISTEN
)

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
