package httpapi

import (
	"cmp"
	"io"
	"net/http"
	"time"

	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/sink"
	"golang.org/x/sync/semaphore"
)

// Deadlines of requests. A client that sends its body or takes what the
// server sends slower than these is cut off, so that it holds a
// connection, a goroutine and its buffers for a bounded time.
const (
	// bodyReadTimeout bounds the time to receive a request's body, from the
	// end of its headers (ReadHeaderTimeout bounds those): 1.5 MiB, the
	// default largest body, at 50 KiB/s.
	bodyReadTimeout = 30 * time.Second
	// answerChunk and Config.WriteTimeout bound the time to send: each
	// answerChunk bytes of an answer, or of one send of a stream, must be
	// taken within WriteTimeout (a large answer gets longer, at a rate of
	// at least 2 KiB/s by default), so that a client that reads slowly
	// but reads is not cut off in the middle of a large message.
	answerChunk = sink.Piece
	// DefaultWriteTimeout is Config.WriteTimeout when it is zero.
	DefaultWriteTimeout = 30 * time.Second
)

// limitBody bounds request bodies: one to MaxRequestBytes (413 past it),
// and all those being received or handled at once to
// MaxInflightRequestBytes (429 past it). A body counts for its
// Content-Length, or for MaxRequestBytes when it has none, from before it
// is read until its handler returns.
func (h *Handler) limitBody(next http.Handler) http.Handler {
	return h.boundBodies(next, h.cfg.MaxRequestBytes, h.inflight, tooLarge,
		"too many request bytes are in flight (--max-inflight-request-bytes): retry later")
}

// boundBodies bounds each body to limit (tooLarge answers 413 past it),
// and all those of the routes it serves being received or handled at
// once to what inflight holds (busy answers 429 past it). A body counts
// for its Content-Length, or limit when it has none, from before it is
// read until its handler returns.
func (h *Handler) boundBodies(next http.Handler, limit int64, inflight *semaphore.Weighted, tooLarge func(int64) *apiError, busy string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > limit {
			h.writeError(w, r, tooLarge(limit))
			return
		}
		if r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody {
			n := r.ContentLength
			if n < 0 {
				n = limit
			}
			if !inflight.TryAcquire(n) {
				w.Header().Set("Retry-After", "1")
				h.writeError(w, r, errorf(kv.CodeTooManyRequests, "%s", busy))
				return
			}
			defer inflight.Release(n)
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		next.ServeHTTP(w, r)
	})
}

// deadlines gives a request that is not a stream its deadlines: its body
// must arrive within bodyReadTimeout, and its answer be taken at the rate
// answerChunk says. They are set through http.ResponseController, so they
// hold for HTTP/1 connections and HTTP/2 streams alike. It also counts
// large answers against MaxHeldAnswerBytes while they are sent.
func (h *Handler) deadlines(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		if r.Body != nil && r.Body != http.NoBody {
			_ = rc.SetReadDeadline(time.Now().Add(bodyReadTimeout))
			r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
		}
		dw := &deadlineWriter{ResponseWriter: w, rc: rc, timeout: h.cfg.WriteTimeout, held: h.held, maxHeld: h.cfg.MaxHeldAnswerBytes}
		defer dw.finish()
		next.ServeHTTP(dw, r)
	})
}

// deadlineBody lifts the read deadline once the body has been read
// whole: an HTTP/1 server then reads the connection in the background,
// and a deadline passing there would cancel the request's context. After
// any other error the deadline stays: the server may still try to read
// what is left of the body, and must not wait for it.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// deadlineWriter sets a write deadline before each answerChunk bytes of
// the answer (and before its head), so that a client that stops reading
// is cut off and one that reads slowly is not. It replaces whatever
// deadline an earlier request on the same connection left.
//
// It also holds back the head of the answer until its first write: an
// answer whose first write is larger than answerChunk must first get its
// size from held (all of it when larger than the whole bound), or it is
// replaced by a 429. Those bytes are counted until the handler returns,
// when the answer has been taken or its client cut off. A deadline alone
// would not do: many clients that each ask for a large answer and stop
// reading hold all of theirs for as long as their deadlines allow.
//
// The keys an answer is built from count against held too, as they are
// copied out of the store (holdBuilding): otherwise many clients asking
// for large answers at once would each build theirs, and only then be
// refused, the heap having held them all.
type deadlineWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration // Config.WriteTimeout
	held    *semaphore.Weighted
	maxHeld int64

	status   int   // the head held back; 0 once sent or when none yet
	headSent bool  // the head went to the client
	refused  bool  // the answer was replaced by a 429: drop the handler's
	holding  int64 // bytes counted against held
	building int64 // bytes of the keys copied for the answer
}

func (d *deadlineWriter) WriteHeader(status int) {
	if d.headSent || d.status != 0 || d.refused {
		return
	}
	if status < http.StatusOK {
		// An informational head (103 Early Hints) goes at once.
		d.ResponseWriter.WriteHeader(status)
		return
	}
	d.status = status
}

// sendHead sends a head with its deadline.
func (d *deadlineWriter) sendHead(status int) {
	_ = d.rc.SetWriteDeadline(time.Now().Add(d.timeout))
	d.ResponseWriter.WriteHeader(status)
	d.headSent = true
}

func (d *deadlineWriter) Write(p []byte) (int, error) {
	if d.refused {
		return len(p), nil
	}
	if !d.headSent {
		if len(p) > answerChunk && !d.hold(int64(len(p))) {
			d.refuse()
			return len(p), nil
		}
		d.sendHead(cmp.Or(d.status, http.StatusOK))
		d.status = 0
		// The head's deadline, just set, covers the first chunk too:
		// setting it again would cost a timer update per answer.
		if len(p) > 0 {
			chunk := p[:min(len(p), answerChunk)]
			n, err := d.ResponseWriter.Write(chunk)
			if err != nil || n == len(p) {
				return n, err
			}
			return d.writeChunks(p[n:], n)
		}
	}
	return d.writeChunks(p, 0)
}

// writeChunks writes p, each answerChunk of it under a deadline of its
// own, and returns the bytes written, written before it included.
func (d *deadlineWriter) writeChunks(p []byte, written int) (int, error) {
	for len(p) > 0 {
		chunk := p[:min(len(p), answerChunk)]
		_ = d.rc.SetWriteDeadline(time.Now().Add(d.timeout))
		n, err := d.ResponseWriter.Write(chunk)
		written += n
		if err != nil {
			return written, err
		}
		p = p[n:]
	}
	return written, nil
}

// hold makes the bytes counted against held n, or all of held when n is
// larger; it counts no fewer than it already does.
func (d *deadlineWriter) hold(n int64) bool {
	more := min(n, d.maxHeld) - d.holding
	if more <= 0 {
		return true
	}
	if !d.held.TryAcquire(more) {
		return false
	}
	d.holding += more
	return true
}

// holdBuilding returns the kv.ReadLimits.Hold of the answer w writes:
// the bytes of the keys it is built from count against held once they
// pass answerChunk, and a key that finds no room ends the read with a
// 429. It takes answerChunk more than it needs each time, so that a large
// answer goes to the shared semaphore once per chunk, not once per key.
// An answer without deadlines (a stream's) holds nothing.
func holdBuilding(w http.ResponseWriter) func(int64) error {
	d := findDeadlineWriter(w)
	if d == nil {
		return nil
	}
	return func(n int64) error {
		d.building += n
		if d.building <= answerChunk || d.building <= d.holding {
			return nil
		}
		if d.hold(d.building+answerChunk) || d.hold(d.building) {
			return nil
		}
		d.Header().Set("Retry-After", "1")
		return errTooManyHeld
	}
}

// findDeadlineWriter finds the *deadlineWriter under w and the writers
// that wrap it, or nil.
func findDeadlineWriter(w http.ResponseWriter) *deadlineWriter {
	for {
		switch x := w.(type) {
		case *deadlineWriter:
			return x
		case interface{ Unwrap() http.ResponseWriter }:
			w = x.Unwrap()
		default:
			return nil
		}
	}
}

var errTooManyHeld = errorf(kv.CodeTooManyRequests,
	"too many large answers are being sent to clients (--max-held-answer-bytes): retry later")

// refuse replaces the answer held back by a 429.
func (d *deadlineWriter) refuse() {
	d.refused = true
	hdr := d.ResponseWriter.Header()
	for _, k := range []string{"Etag", "Content-Length", "Content-Disposition", "Last-Modified"} {
		hdr.Del(k)
	}
	hdr.Set("Retry-After", "1")
	d.headSent = true // answerError writes through the server's writer
	answerError(d.ResponseWriter, errTooManyHeld)
}

// Flush sends the head held back, if any, before flushing.
func (d *deadlineWriter) Flush() {
	if !d.headSent && d.status != 0 {
		d.sendHead(d.status)
		d.status = 0
	}
	_ = d.rc.Flush()
}

// finish sends a head still held back (an answer without a body) and
// gives back what the answer held.
func (d *deadlineWriter) finish() {
	if !d.headSent && d.status != 0 {
		d.sendHead(d.status)
	}
	if d.holding > 0 {
		d.held.Release(d.holding)
	}
}

// Unwrap lets http.ResponseController reach the server's writer.
func (d *deadlineWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }
