package httpapi

import (
	"net/http"
	"runtime/debug"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
)

// requestLog writes one line per request: request id, method, route
// pattern, status, bytes and latency. It never logs the path, the query or
// bodies, which hold keys, values and tokens.
func (h *Handler) requestLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		next.ServeHTTP(ww, r)
		route := "unmatched"
		if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
			route = rc.RoutePattern()
		}
		status := ww.Status()
		if status == 0 {
			status = http.StatusOK
		}
		latency := time.Since(start)
		h.metrics.observe(route, r.Method, status, latency.Seconds())
		h.cfg.Logger.Info().
			Str("request_id", middleware.GetReqID(r.Context())).
			Str("method", r.Method).
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
				writeAPIError(w, &apiError{status: http.StatusInternalServerError, code: "internal", message: "internal error"})
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// limitBody bounds request bodies to MaxRequestBytes.
func (h *Handler) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > h.cfg.MaxRequestBytes {
			writeAPIError(w, &apiError{status: http.StatusRequestEntityTooLarge, code: "request_too_large",
				message: "request body larger than the server's limit"})
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, h.cfg.MaxRequestBytes)
		next.ServeHTTP(w, r)
	})
}
