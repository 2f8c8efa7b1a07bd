package answer

import (
	"cmp"
	"io"
	"net/http"
	"time"

	"github.com/httpkv/httpkv/sink"
	"golang.org/x/sync/semaphore"
)

// Piece is how many bytes of an answer are written under one deadline:
// a stream's piece (sink.Piece), so that every write of the server is cut
// off by the same rule.
const Piece = sink.Piece

// Body lifts the read deadline once the body has been read whole: an
// HTTP/1 server then reads the connection in the background, and a
// deadline passing there would cancel the request's context. After any
// other error the deadline stays: the server may still try to read what
// is left of the body, and must not wait for it.
type Body struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

// NewBody returns body, whose read deadline rc set, lifting it at its end.
func NewBody(body io.ReadCloser, rc *http.ResponseController) *Body {
	return &Body{ReadCloser: body, rc: rc}
}

func (b *Body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// Held is the bound on the bytes large answers hold at once.
type Held struct {
	// Sem holds Max bytes; an answer takes its size from it.
	Sem *semaphore.Weighted
	Max int64
	// Refuse writes the answer that replaces one refused for its size (a
	// 429, Retry-After already set) to w, the server's writer.
	Refuse func(w http.ResponseWriter)
}

// Writer sets a write deadline before each Piece of the answer (and
// before its head), so that a client that stops reading is cut off and
// one that reads slowly is not. It replaces whatever deadline an earlier
// request on the same connection left.
//
// It also holds back the head of the answer until its first write: an
// answer whose first write is larger than Piece must first get its size
// from the Held bound (all of it when larger than the whole bound), or it
// is refused (Held.Refuse). Those bytes are counted until Finish, when
// the answer has been taken or its client cut off. A deadline alone would
// not do: many clients that each ask for a large answer and stop reading
// hold all of theirs for as long as their deadlines allow.
//
// The keys an answer is built from count against the bound too, as they
// are copied out of the store (HoldBuilding): otherwise many clients
// asking for large answers at once would each build theirs, and only then
// be refused, the heap having held them all.
type Writer struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	held    Held

	status   int   // the head held back; 0 once sent or when none yet
	headSent bool  // the head went to the client
	refused  bool  // the answer was refused: drop the handler's
	holding  int64 // bytes counted against held
	building int64 // bytes of the keys copied for the answer
}

// NewWriter returns w writing each Piece within timeout, counting large
// answers against held. The caller calls Finish once its handler returns.
func NewWriter(w http.ResponseWriter, rc *http.ResponseController, timeout time.Duration, held Held) *Writer {
	return &Writer{ResponseWriter: w, rc: rc, timeout: timeout, held: held}
}

func (d *Writer) WriteHeader(status int) {
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
func (d *Writer) sendHead(status int) {
	_ = d.rc.SetWriteDeadline(time.Now().Add(d.timeout))
	d.ResponseWriter.WriteHeader(status)
	d.headSent = true
}

func (d *Writer) Write(p []byte) (int, error) {
	if d.refused {
		return len(p), nil
	}
	if !d.headSent {
		if len(p) > Piece && !d.hold(int64(len(p))) {
			d.refuse()
			return len(p), nil
		}
		d.sendHead(cmp.Or(d.status, http.StatusOK))
		d.status = 0
		// The head's deadline, just set, covers the first piece too:
		// setting it again would cost a timer update per answer.
		if len(p) > 0 {
			piece := p[:min(len(p), Piece)]
			n, err := d.ResponseWriter.Write(piece)
			if err != nil || n == len(p) {
				return n, err
			}
			return d.writePieces(p[n:], n)
		}
	}
	return d.writePieces(p, 0)
}

// writePieces writes p, each Piece of it under a deadline of its own, and
// returns the bytes written, written before it included.
func (d *Writer) writePieces(p []byte, written int) (int, error) {
	for len(p) > 0 {
		piece := p[:min(len(p), Piece)]
		_ = d.rc.SetWriteDeadline(time.Now().Add(d.timeout))
		n, err := d.ResponseWriter.Write(piece)
		written += n
		if err != nil {
			return written, err
		}
		p = p[n:]
	}
	return written, nil
}

// hold makes the bytes counted against the bound n, or all of it when n
// is larger; it counts no fewer than it already does.
func (d *Writer) hold(n int64) bool {
	more := min(n, d.held.Max) - d.holding
	if more <= 0 {
		return true
	}
	if !d.held.Sem.TryAcquire(more) {
		return false
	}
	d.holding += more
	return true
}

// HoldBuilding returns the kv.ReadLimits.Hold of the answer w writes: the
// bytes of the keys it is built from count against the bound once they
// pass Piece, and a key that finds no room ends the read with full (and
// Retry-After set). It takes Piece more than it needs each time, so that
// a large answer goes to the shared semaphore once per piece, not once
// per key. An answer without a Writer (a stream's) holds nothing: nil.
func HoldBuilding(w http.ResponseWriter, full error) func(int64) error {
	d := find(w)
	if d == nil {
		return nil
	}
	return func(n int64) error {
		d.building += n
		if d.building <= Piece || d.building <= d.holding {
			return nil
		}
		if d.hold(d.building+Piece) || d.hold(d.building) {
			return nil
		}
		d.Header().Set("Retry-After", "1")
		return full
	}
}

// find finds the *Writer under w and the writers that wrap it, or nil.
func find(w http.ResponseWriter) *Writer {
	for {
		switch x := w.(type) {
		case *Writer:
			return x
		case interface{ Unwrap() http.ResponseWriter }:
			w = x.Unwrap()
		default:
			return nil
		}
	}
}

// refuse replaces the answer held back by Held.Refuse's.
func (d *Writer) refuse() {
	d.refused = true
	hdr := d.ResponseWriter.Header()
	for _, k := range []string{"Etag", "Content-Length", "Content-Disposition", "Last-Modified"} {
		hdr.Del(k)
	}
	hdr.Set("Retry-After", "1")
	d.headSent = true // Refuse writes through the server's writer
	d.held.Refuse(d.ResponseWriter)
}

// Flush sends the head held back, if any, before flushing.
func (d *Writer) Flush() {
	if !d.headSent && d.status != 0 {
		d.sendHead(d.status)
		d.status = 0
	}
	_ = d.rc.Flush()
}

// Finish sends a head still held back (an answer without a body) and
// gives back what the answer held.
func (d *Writer) Finish() {
	if !d.headSent && d.status != 0 {
		d.sendHead(d.status)
	}
	if d.holding > 0 {
		d.held.Sem.Release(d.holding)
	}
}

// Unwrap lets http.ResponseController reach the server's writer.
func (d *Writer) Unwrap() http.ResponseWriter { return d.ResponseWriter }
