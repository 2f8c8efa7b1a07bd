package httpapi

import (
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/rs/zerolog"
	"golang.org/x/sync/semaphore"

	"github.com/httpkv/httpkv/auth"
	"github.com/httpkv/httpkv/openapi"
)

// Defaults for Config fields left zero.
const (
	DefaultMaxRequestBytes  = 3 << 19 // 1.5 MiB
	DefaultMaxResponseBytes = 64 << 20
	// DefaultMaxInflightRequestBytes allows about 42 bodies of the
	// default largest size at once.
	DefaultMaxInflightRequestBytes = 64 << 20
	DefaultKeepAliveInterval       = 15 * time.Second
)

// Config wires a Handler to the backend it serves.
type Config struct {
	// Backend is the store the API serves.
	Backend Backend
	// Auth serves the auth endpoints and, once enabled, authorizes every
	// request; nil serves no auth and allows everything.
	Auth *auth.Store
	// Authorizer, if set, replaces the authorizer made from Auth.
	Authorizer Authorizer
	// Logger receives one line per request and every unexpected error.
	Logger zerolog.Logger
	// Version is reported by /v1/status.
	Version string
	// CORSAllowedOrigins lists the origins whose pages may call the API
	// ("*" for any).
	CORSAllowedOrigins []string
	// MaxRequestBytes bounds request bodies; larger ones answer 413.
	MaxRequestBytes int64
	// MaxInflightRequestBytes bounds the request bodies being received or
	// handled at once (each counts for its Content-Length, or
	// MaxRequestBytes without one); past it requests answer 429.
	MaxInflightRequestBytes int64
	// MaxResponseBytes bounds the key and value bytes of one answer (a
	// list page, or every range of a txn together); past it the request
	// answers 400 and changes nothing.
	MaxResponseBytes int64
	// KeepAliveInterval is how often an idle watch stream gets a comment.
	KeepAliveInterval time.Duration
	// WatchStreams bounds the streams of many watchers
	// (/v1/watch/streams); zero fields take their defaults.
	WatchStreams WatchStreamConfig
	// SnapshotWriteTimeout bounds each write of a snapshot to its client:
	// one that takes nothing for this long is cut off. Zero means
	// DefaultSnapshotWriteTimeout.
	SnapshotWriteTimeout time.Duration
}

// Handler serves the API. Create it with NewHandler.
type Handler struct {
	cfg         Config
	router      chi.Router
	extraErrors []ErrorMapping
	metrics     *metrics
	tokens      tokenCodec
	ids         *requestIDs
	inflight    *semaphore.Weighted
	// shuttingDown makes /health answer 503 while the server stops.
	shuttingDown atomic.Bool
	// streams are the open watch streams, which Close and Shutdown end.
	streams *streamSet
	// wstreams are the streams of many watchers (/v1/watch/streams).
	wstreams *streamRegistry
	// openAPIValid validates the OpenAPI document once, when it is first
	// asked for.
	openAPIValid func() error
}

// NewHandler returns the API's handler.
func NewHandler(cfg Config) *Handler {
	if cfg.MaxRequestBytes <= 0 {
		cfg.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if cfg.MaxInflightRequestBytes <= 0 {
		cfg.MaxInflightRequestBytes = DefaultMaxInflightRequestBytes
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if cfg.KeepAliveInterval <= 0 {
		cfg.KeepAliveInterval = DefaultKeepAliveInterval
	}
	if cfg.SnapshotWriteTimeout <= 0 {
		cfg.SnapshotWriteTimeout = DefaultSnapshotWriteTimeout
	}
	switch {
	case cfg.Authorizer != nil:
	case cfg.Auth != nil:
		cfg.Authorizer = authAuthorizer{a: cfg.Auth}
	default:
		cfg.Authorizer = allowAll{}
	}
	h := &Handler{
		cfg:      cfg,
		streams:  newStreamSet(),
		tokens:   newTokenCodec(cfg.Backend.PageTokenKey()),
		ids:      newRequestIDs(),
		inflight: semaphore.NewWeighted(cfg.MaxInflightRequestBytes),
	}
	h.openAPIValid = sync.OnceValue(func() error {
		_, err := openapi.Load()
		return err
	})
	if a, ok := cfg.Authorizer.(interface{ Errors() []ErrorMapping }); ok {
		h.extraErrors = append(h.extraErrors, a.Errors()...)
	}
	h.wstreams = newStreamRegistry(cfg.WatchStreams, cfg.Backend, cfg.Authorizer)
	h.metrics = h.newMetrics()
	h.router = h.routes()
	return h
}

// ErrorMapping is one row of the table from domain errors to the contract;
// components outside this package (an authenticator) give their own rows.
type ErrorMapping struct {
	Target error
	Status int
	Code   string
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.router.ServeHTTP(w, r)
}

// ShuttingDown makes /health answer 503, so load balancers stop sending
// requests while the server drains.
func (h *Handler) ShuttingDown() { h.shuttingDown.Store(true) }

func (h *Handler) log(r *http.Request) *zerolog.Logger {
	l := h.cfg.Logger.With().Str("request_id", middleware.GetReqID(r.Context())).Logger()
	return &l
}

// writeJSON answers with v encoded by encoding/json.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"code":"internal","message":"internal error"}}`)
	}
	writeRawJSON(w, status, append(b, '\n'))
}

// writeRawJSON answers with an already encoded body.
func writeRawJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
