package httpapi

import (
	"net/http"
	"time"

	"github.com/httpkv/httpkv/answer"
	"github.com/httpkv/httpkv/kv"
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
	answerChunk = answer.Piece
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
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = http.MaxBytesReader(w, r.Body, limit)
		}
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
			r.Body = answer.NewBody(r.Body, rc)
		}
		dw := answer.NewWriter(w, rc, h.cfg.WriteTimeout, answer.Held{Sem: h.held, Max: h.cfg.MaxHeldAnswerBytes, Refuse: refuseHeld})
		defer dw.Finish()
		next.ServeHTTP(dw, r)
	})
}

// holdBuilding returns the kv.ReadLimits.Hold of the answer w writes
// (answer.HoldBuilding): a key that finds no room ends the read with a
// 429.
func holdBuilding(w http.ResponseWriter) func(int64) error {
	return answer.HoldBuilding(w, errTooManyHeld)
}

var errTooManyHeld = errorf(kv.CodeTooManyRequests,
	"too many large answers are being sent to clients (--max-held-answer-bytes): retry later")

// refuseHeld answers a 429 in place of an answer refused for its size.
func refuseHeld(w http.ResponseWriter) { answerError(w, errTooManyHeld) }
