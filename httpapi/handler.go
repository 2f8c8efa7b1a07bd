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

	"github.com/httpkv/httpkv/auth"
	"github.com/httpkv/httpkv/concurrency"
	"github.com/httpkv/httpkv/openapi"
	"github.com/httpkv/httpkv/watch"
)

// Defaults for Config fields left zero.
const (
	DefaultMaxRequestBytes   = 3 << 19 // 1.5 MiB
	DefaultKeepAliveInterval = 15 * time.Second
)

// Config wires a Handler to the stores it serves.
type Config struct {
	// Store performs writes and watches; Store.KV() serves reads and
	// maintenance.
	Store *watch.Store
	// Leases serves the lease endpoints; nil answers them 503.
	Leases Leases
	// Concurrency serves locks and elections; nil answers them 503.
	Concurrency concurrency.Backend
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
	// KeepAliveInterval is how often an idle watch stream gets a comment.
	KeepAliveInterval time.Duration
	// PageTokenKey signs page tokens, so that clients cannot forge them.
	// Empty means a random key: tokens then last as long as the process.
	PageTokenKey []byte
}

// Handler serves the API. Create it with NewHandler.
type Handler struct {
	cfg         Config
	router      chi.Router
	extraErrors []ErrorMapping
	metrics     *metrics
	tokens      tokenSigner
	// shuttingDown makes /health answer 503 while the server stops.
	shuttingDown atomic.Bool
	// stop ends the watch streams, and streams counts them for Close.
	// streamsMu orders Close against streams starting.
	stop      chan struct{}
	streamsMu sync.Mutex
	closing   bool
	streams   sync.WaitGroup
	// openAPIValid validates the OpenAPI document once, when it is first
	// asked for.
	openAPIValid func() error
}

// NewHandler returns the API's handler.
func NewHandler(cfg Config) *Handler {
	if cfg.MaxRequestBytes <= 0 {
		cfg.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if cfg.KeepAliveInterval <= 0 {
		cfg.KeepAliveInterval = DefaultKeepAliveInterval
	}
	switch {
	case cfg.Authorizer != nil:
	case cfg.Auth != nil:
		cfg.Authorizer = authAuthorizer{a: cfg.Auth}
	default:
		cfg.Authorizer = allowAll{}
	}
	h := &Handler{cfg: cfg, stop: make(chan struct{}), tokens: newTokenSigner(cfg.PageTokenKey)}
	h.openAPIValid = sync.OnceValue(func() error {
		_, err := openapi.Load()
		return err
	})
	if cfg.Leases != nil {
		h.extraErrors = append(h.extraErrors, cfg.Leases.Errors()...)
	}
	if a, ok := cfg.Authorizer.(interface{ Errors() []ErrorMapping }); ok {
		h.extraErrors = append(h.extraErrors, a.Errors()...)
	}
	h.metrics = h.newMetrics()
	h.router = h.routes()
	return h
}

// ErrorMapping is one row of the table from domain errors to the contract;
// components outside this package (a lease manager, an authenticator) give
// their own rows.
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
