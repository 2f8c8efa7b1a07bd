package httpapi

import (
	"context"
	"crypto/rand"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/httpkv/httpkv/httpapi/metrics"
	"github.com/httpkv/httpkv/kv"
)

// maxRequestIDLen bounds a request id a client sends in X-Request-Id: it
// is logged with every line of the request.
const maxRequestIDLen = 64

// requestIDs hands out request ids: a random prefix per Handler and a
// counter, unless the client sent a usable one.
type requestIDs struct {
	prefix string
	next   atomic.Uint64
}

func newRequestIDs() *requestIDs {
	return &requestIDs{prefix: rand.Text()[:10]}
}

// requestID puts the request's id in its context (where
// middleware.GetReqID finds it) and in the X-Request-Id response header.
// A client's X-Request-Id is kept if it is at most maxRequestIDLen
// characters of letters, digits and ._:/+=- (it goes to the logs as is);
// any other is replaced by a new one.
func (h *Handler) requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(middleware.RequestIDHeader)
		if !validRequestID(id) {
			var buf [64]byte
			b := append(append(buf[:0], h.ids.prefix...), '-')
			id = string(strconv.AppendUint(b, h.ids.next.Add(1), 10))
		}
		w.Header().Set(middleware.RequestIDHeader, id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), middleware.RequestIDKey, id)))
	})
}

func validRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		ok := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		switch c {
		case '.', '_', ':', '/', '+', '=', '-':
			ok = true
		}
		if !ok {
			return false
		}
	}
	return true
}

// requestLog writes one line per request: request id, method, route
// pattern, status, bytes and latency. It never logs the path, the query or
// bodies, which hold keys, values and tokens; the method is logged as its
// metric label, so a client cannot fill the log with one of its own.
func (h *Handler) requestLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		next.ServeHTTP(ww, r)
		route := "unmatched"
		if rc := chi.RouteContext(r.Context()); rc != nil {
			if p := routeLabel(rc); p != "" {
				route = p
			}
		}
		status := ww.Status()
		if status == 0 {
			status = http.StatusOK
		}
		latency := time.Since(start)
		method := metrics.MethodLabel(r.Method)
		h.metrics.Observe(route, method, status, latency.Seconds())
		h.cfg.Logger.Info().
			Str("request_id", middleware.GetReqID(r.Context())).
			Str("method", method).
			Str("route", route).
			Int("status", status).
			Int("bytes", ww.BytesWritten()).
			Dur("latency", latency).
			Msg("request")
	})
}

// recoverer turns a panic in a handler into a logged 500.
func (h *Handler) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				h.log(r).Error().Interface("panic", p).Bytes("stack", debug.Stack()).Msg("handler panic")
				answerError(w, errorf(kv.CodeInternal, "internal error"))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// noSniff tells browsers to take every answer for the type it says it is.
// noSniffValue and jsonContentType are header values every answer
// shares rather than allocates: net/http only reads them, and a later Set
// or Add on the header replaces or copies the slice.
var (
	noSniffValue    = []string{"nosniff"}
	jsonContentType = []string{"application/json; charset=utf-8"}
)

func noSniff(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["X-Content-Type-Options"] = noSniffValue
		next.ServeHTTP(w, r)
	})
}

// checkQuery refuses a malformed query string (a bad percent escape, a
// semicolon) with 400, where url.Values would drop the parameter and the
// request would run as if it had not been given: a list without its key
// lists every key.
func (h *Handler) checkQuery(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if msg := malformedQuery(r.URL.RawQuery); msg != "" {
			h.writeError(w, r, badRequest("malformed query string: %s", msg))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// malformedQuery says what url.ParseQuery would refuse in raw, or ""
// when it parses, without building the values: a semicolon, or a percent
// sign not followed by two hex digits.
func malformedQuery(raw string) string {
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case ';':
			return "a semicolon separator"
		case '%':
			if i+2 >= len(raw) || !isHex(raw[i+1]) || !isHex(raw[i+2]) {
				return "a bad percent escape at byte " + strconv.Itoa(i)
			}
		}
	}
	return ""
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
