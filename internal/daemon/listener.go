package daemon

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/httpkv/httpkv/httpapi"
)

// limitListener accepts at most n connections at once, as
// netutil.LimitListener does: past it, new connections wait in the
// kernel's backlog until one closes. Its connections also keep their
// socket reachable (SyscallConn), which netutil's hide: the API's watch
// streams wait for their clients hanging up in one epoll for all of them
// instead of a reader goroutine each.
type limitListener struct {
	net.Listener
	slots     chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

func newLimitListener(l net.Listener, n int) *limitListener {
	return &limitListener{Listener: l, slots: make(chan struct{}, n), done: make(chan struct{})}
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
}

func (l *limitListener) Close() error {
	err := l.Listener.Close()
	l.closeOnce.Do(func() { close(l.done) })
	return err
}

// limitConn gives its slot back when closed, once, and answers requests
// net/http cannot read in JSON (Write).
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
	// read is set by a Read that returned bytes and cleared by the next
	// Write: net/http answers a request it cannot read with the first
	// write after reading it, so only such a write is looked at. Every
	// later write of a response (its body, a watch stream's events) is
	// written as it is, whatever the bytes of a stored value look like.
	read atomic.Bool
}

func (c *limitConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.read.Store(true)
	}
	return n, err
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// Write writes b, except an answer Go's HTTP server gives itself to a
// request it cannot read (a malformed percent escape in the path, headers
// over the limit...): that goes out as the API's JSON error instead of
// net/http's text/plain one. Over TLS the connection carries records, and
// such answers go out as net/http writes them.
func (c *limitConn) Write(b []byte) (int, error) {
	if !c.read.Swap(false) {
		return c.Conn.Write(b)
	}
	answer, ok := httpapi.ParseErrorAnswer(b)
	if !ok {
		return c.Conn.Write(b)
	}
	if _, err := c.Conn.Write(answer); err != nil {
		return 0, err
	}
	return len(b), nil
}

// SyscallConn reaches the socket under the connection.
func (c *limitConn) SyscallConn() (syscall.RawConn, error) {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	return sc.SyscallConn()
}
