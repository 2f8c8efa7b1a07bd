package daemon

import (
	"context"
	"crypto/tls"
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
	slots chan struct{}
	// spares are slots past the limit, for connections that may ask only
	// for /health and /metrics (see withSpares); nil when there are none.
	spares    chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

func newLimitListener(l net.Listener, n int) *limitListener {
	return &limitListener{Listener: l, slots: make(chan struct{}, n), done: make(chan struct{})}
}

// withSpares makes the listener accept up to k connections past its
// limit, marked spare: the server answers only /health and /metrics on
// them, so that a server whose connections are all taken still says how
// it is.
func (l *limitListener) withSpares(k int) *limitListener {
	l.spares = make(chan struct{}, k)
	return l
}

func (l *limitListener) Accept() (net.Conn, error) {
	slots := l.slots
	select {
	case l.slots <- struct{}{}:
	default:
		select {
		case l.slots <- struct{}{}:
		case l.spares <- struct{}{}:
			slots = l.spares
		case <-l.done:
			return nil, net.ErrClosed
		}
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-slots
		return nil, err
	}
	if slots == l.spares {
		// A slot may have come free while this one waited.
		select {
		case l.slots <- struct{}{}:
			<-l.spares
			slots = l.slots
		default:
		}
	}
	return &limitConn{Conn: c, release: func() { <-slots }, spare: slots == l.spares}, nil
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
	spare   bool // accepted past the limit (withSpares)
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

// spareConnections is how many connections are accepted past
// MaxConnections, to answer /health and /metrics only: a sixty-fourth of
// the limit, between 1 and 32.
func spareConnections(maxConnections int) int { return min(32, max(1, maxConnections/64)) }

// markSpare is part of the server's ConnContext: a connection accepted
// past MaxConnections serves only /health and /metrics.
func markSpare(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if lc, ok := c.(*limitConn); ok && lc.spare {
		return httpapi.OnSpareConnection(ctx)
	}
	return ctx
}
