package daemon

import (
	"context"
	"net"
	"net/http"

	"github.com/httpkv/httpkv/httpapi"
)

// netHTTPAnswers makes the answers Go's HTTP/1 server gives itself to a
// request it cannot read (a malformed percent escape in the path, no
// Host, headers over the limit...) go out as the API's JSON error, not
// net/http's text/plain one. net/http writes such an answer straight to
// the connection, in one Write, and has no hook to change it; so the
// connection rewrites it (limitConn.Write, httpapi.ParseErrorAnswer).
//
// It must never touch an answer of the API: a stored value may hold
// exactly the bytes of net/http's answer, and be written in a Write of
// its own (its last bytes after 64 KiB chunks). So a write is looked at
// only while the connection is net/http's own, a state the server itself
// reports: from when net/http takes the connection (StateNew), or has
// written a whole answer and waits for the next request (StateIdle),
// until a handler starts on it. net/http writes nothing else then but
// such an answer, and every byte of a handler's answer, its last ones
// flushed after the handler returns included, is written before the
// connection is idle again. A connection a handler takes over (a watch
// stream) never is. Over TLS the server sees the TLS connection, never
// limitConn, and answers go out as net/http writes them, text/plain.
type netHTTPAnswers struct{}

// connKey is the context key of the connection a request came on.
type connKey struct{}

// Context is the server's ConnContext: it notes the connection on the
// context of its requests.
func (netHTTPAnswers) Context(ctx context.Context, c net.Conn) context.Context {
	if lc, ok := c.(*limitConn); ok {
		return context.WithValue(ctx, connKey{}, lc)
	}
	return ctx
}

// State is the server's ConnState: a connection new or idle is
// net/http's own.
func (netHTTPAnswers) State(c net.Conn, state http.ConnState) {
	if lc, ok := c.(*limitConn); ok && (state == http.StateNew || state == http.StateIdle) {
		lc.own.Store(true)
	}
}

// Handler wraps the server's handler: a connection is the handler's from
// before it writes anything.
func (netHTTPAnswers) Handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if lc, ok := r.Context().Value(connKey{}).(*limitConn); ok {
			lc.own.Store(false)
		}
		h.ServeHTTP(w, r)
	})
}

// Write writes b, except net/http's own answer to a request it cannot
// read, written while the connection is its own: that goes out as the
// API's JSON error.
func (c *limitConn) Write(b []byte) (int, error) {
	if !c.own.Load() {
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
