package sink

import (
	"errors"
	"net/http"
	"time"

	"github.com/httpkv/httpkv/stream"
)

// Sink is where a stream writes: the stream engine's interface, which
// the connections of this package implement.
type Sink = stream.Sink

// Piece is how much of a send goes out under one write deadline. Each
// send on a stream, over a hijacked HTTP/1 connection or an HTTP/2
// stream, goes out in pieces of Piece bytes, each under a write deadline
// of the sink's timeout (--write-timeout): a client that takes no bytes
// for that long is treated as gone, so that a stuck client cannot hold a
// stream forever, while one that reads a large message slowly, but
// reads, keeps it. (Shutdown does not wait for it: see Set.Wait.)
const Piece = 64 << 10

// Response writes through the server's ResponseWriter: HTTP/2, or an
// HTTP/1 connection that could not be taken over.
type Response struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	done    <-chan struct{}
	timeout time.Duration
}

// NewResponse returns the sink of w, whose client is gone once r's
// context is done; each piece of a send has timeout.
func NewResponse(w http.ResponseWriter, r *http.Request, timeout time.Duration) *Response {
	return &Response{w: w, rc: http.NewResponseController(w), done: r.Context().Done(), timeout: timeout}
}

// Send writes under a deadline per piece, and lifts it once the bytes
// are out: an HTTP/2 stream whose deadline passes while it is idle is
// reset.
func (s *Response) Send(b []byte) bool {
	for len(b) > 0 {
		if err := s.rc.SetWriteDeadline(time.Now().Add(s.timeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return false
		}
		n := min(len(b), Piece)
		if _, err := s.w.Write(b[:n]); err != nil || s.rc.Flush() != nil {
			return false
		}
		b = b[n:]
	}
	_ = s.rc.SetWriteDeadline(time.Time{})
	return true
}

func (s *Response) Gone() <-chan struct{} { return s.done }
func (s *Response) Close()                {}
func (s *Response) Cut()                  { _ = s.rc.SetWriteDeadline(time.Now()) }
