package httpapi

import (
	"context"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/httpkv/httpkv/httpapi/metrics"
	"github.com/httpkv/httpkv/kv"
)

// exchange is what every layer of one request shares: the writer the
// request log reads the answer's status and size from, the request's id,
// and the route context the router fills in. ServeHTTP makes it in one
// allocation and gives the request one new context, where a chain of
// middleware wrapped the writer, added two contexts and copied the
// request twice: a good part of a one-key get's CPU.
type exchange struct {
	http.ResponseWriter
	id     string
	start  time.Time
	status int // of the answer's head; 0 until one is sent
	bytes  int // of the answer's body

	ctx  exchangeCtx
	rctx chi.Context
	// The route context's first patterns and parameters, so that
	// routing them allocates nothing.
	patterns    [4]string
	paramKeys   [2]string
	paramValues [2]string
}

// exchangeCtx is the request's context: its id for middleware.GetReqID
// and its route context for chi, both read from the exchange.
type exchangeCtx struct {
	context.Context
	x *exchange
}

func (c *exchangeCtx) Value(key any) any {
	switch key {
	case chi.RouteCtxKey:
		return &c.x.rctx
	case middleware.RequestIDKey:
		return c.x.id
	}
	return c.Context.Value(key)
}

// WriteHeader sends the first final head and ignores any other, as
// net/http would (logging each); informational heads (103) go as they
// come.
func (x *exchange) WriteHeader(status int) {
	if status < http.StatusOK && status != http.StatusSwitchingProtocols {
		x.ResponseWriter.WriteHeader(status)
		return
	}
	if x.status != 0 {
		return
	}
	x.status = status
	x.ResponseWriter.WriteHeader(status)
}

func (x *exchange) Write(p []byte) (int, error) {
	if x.status == 0 {
		x.status = http.StatusOK
	}
	n, err := x.ResponseWriter.Write(p)
	x.bytes += n
	return n, err
}

// Unwrap lets http.ResponseController reach the server's writer, to
// flush, set deadlines and hijack.
func (x *exchange) Unwrap() http.ResponseWriter { return x.ResponseWriter }

// ServeHTTP is where every request starts. It gives the request its id
// (the client's X-Request-Id when usable, see validRequestID; the id goes
// back in the answer's X-Request-Id), tells browsers not to sniff types,
// refuses requests on spare connections (OnSpareConnection) but for
// /health and /metrics, recovers a panicking handler into a 500, and
// logs a line and records metrics for every request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	x := &exchange{ResponseWriter: w, start: time.Now()}
	x.id = r.Header.Get(middleware.RequestIDHeader)
	if !validRequestID(x.id) {
		x.id = h.ids.new()
	}
	hdr := w.Header()
	hdr[middleware.RequestIDHeader] = []string{x.id}
	hdr["X-Content-Type-Options"] = noSniffValue
	x.rctx.Routes = h.router
	x.rctx.RoutePatterns = x.patterns[:0]
	x.rctx.URLParams.Keys = x.paramKeys[:0]
	x.rctx.URLParams.Values = x.paramValues[:0]
	spare := r.Context().Value(spareConnKey{}) != nil
	x.ctx = exchangeCtx{Context: r.Context(), x: x}
	r = r.WithContext(&x.ctx)
	h.serve(x, r, spare)
	h.logRequest(x, r)
}

// serve routes the request, recovering a panic of its handler.
func (h *Handler) serve(x *exchange, r *http.Request, spare bool) {
	defer h.recoverHandler(x, r)
	if spare {
		if r.URL.Path != "/health" && r.URL.Path != "/metrics" {
			h.refuse(x, r, errTooManyConnections)
			return
		}
		x.Header().Set("Connection", "close")
	}
	h.router.ServeHTTP(x, r)
}

// recoverHandler turns a panic in a handler into a logged 500. An
// http.ErrAbortHandler goes on up to net/http, which drops the
// connection without logging; the request is not logged either.
func (h *Handler) recoverHandler(x *exchange, r *http.Request) {
	p := recover()
	if p == nil {
		return
	}
	if p == http.ErrAbortHandler {
		panic(p)
	}
	h.log(r).Error().Interface("panic", p).Bytes("stack", debug.Stack()).Msg("handler panic")
	answerError(x, errorf(kv.CodeInternal, "internal error"))
}

// logRequest writes the request's line: id, method, route pattern,
// status, bytes and latency, and records its metrics. It never logs the
// path, the query or bodies, which hold keys, values and tokens; the
// method is logged as its metric label, so a client cannot fill the log
// with one of its own.
func (h *Handler) logRequest(x *exchange, r *http.Request) {
	route := "unmatched"
	if p := routeLabel(&x.rctx); p != "" {
		route = p
	}
	status := x.status
	if status == 0 {
		status = http.StatusOK
	}
	latency := time.Since(x.start)
	method := metrics.MethodLabel(r.Method)
	h.metrics.Observe(route, method, status, latency.Seconds())
	h.cfg.Logger.Info().
		Str("request_id", x.id).
		Str("method", method).
		Str("route", route).
		Int("status", status).
		Int("bytes", x.bytes).
		Dur("latency", latency).
		Msg("request")
}
