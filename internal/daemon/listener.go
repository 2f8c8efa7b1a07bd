package daemon

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
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
// net/http cannot read in JSON (see netHTTPAnswers).
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
	// own is set while net/http alone writes on the connection, and no
	// answer of a handler is being written (see netHTTPAnswers).
	own atomic.Bool
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// SyscallConn reaches the socket under the connection.
func (c *limitConn) SyscallConn() (syscall.RawConn, error) {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	return sc.SyscallConn()
}
