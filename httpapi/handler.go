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
	"github.com/httpkv/httpkv/httpapi/metrics"
	"github.com/httpkv/httpkv/openapi"
	"github.com/httpkv/httpkv/sink"
	"github.com/httpkv/httpkv/stream/multi"
	"github.com/httpkv/httpkv/wire"
)

// Defaults for Config fields left zero.
const (
	DefaultMaxRequestBytes  = 3 << 19 // 1.5 MiB
	DefaultMaxResponseBytes = 64 << 20
	// DefaultMaxInflightRequestBytes allows about 42 bodies of the
	// default largest size at once.
	DefaultMaxInflightRequestBytes = 64 << 20
	// DefaultMaxHeldAnswerBytes holds about two answers of the default
	// largest size (JSON at most doubles keys and values) for slow
	// clients at once.
	DefaultMaxHeldAnswerBytes = 4 * DefaultMaxResponseBytes
	DefaultKeepAliveInterval  = 15 * time.Second
	// DefaultMaxStreamConnections holds, at about 13 KiB for an idle
	// stream and 100 KiB for one stalled mid-send, 210 MiB or 1.6 GiB.
	DefaultMaxStreamConnections        = 16384
	DefaultMaxStreamConnectionsPerUser = 10000
	// DefaultMaxWatchers holds, at about 1 KiB a watcher of a stream of
	// many watchers, 100 MiB.
	DefaultMaxWatchers        = 100000
	DefaultMaxWatchersPerUser = 25000
	DefaultMaxImportBytes     = 64 << 20
)

// Config tunes a Handler: bounds, timeouts and what it reports. What it
// serves is given to NewHandler.
type Config struct {
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
	// MaxImportBytes bounds the body of an import (larger ones answer
	// 413), and the bodies of all imports being received or applied at
	// once (past it an import answers 429).
	MaxImportBytes int64
	// MaxResponseBytes bounds the key and value bytes of one answer (a
	// list page, or every range of a txn together); past it the request
	// answers 400 and changes nothing.
	MaxResponseBytes int64
	// MaxHeldAnswerBytes bounds the bytes of large answers (past
	// answerChunk) that are being sent at once: built, and waiting for
	// their clients to take them. Past it a request answers 429 rather
	// than hold one more, so that clients that ask for large answers and
	// stop reading cannot fill the server's memory.
	MaxHeldAnswerBytes int64
	// KeepAliveInterval is how often an idle watch stream gets a comment.
	KeepAliveInterval time.Duration
	// WatchStreams bounds the streams of many watchers
	// (/v1/watch/streams); zero fields take their defaults.
	WatchStreams multi.Config
	// MaxStreamConnections bounds the streams open at once, each holding
	// a connection: single watches (GET /v1/watch), the readers of
	// streams of many watchers and elections' observers;
	// MaxStreamConnectionsPerUser those of one user, or of one client
	// address with auth off. Past either a new stream answers 429, and
	// its connection closes.
	MaxStreamConnections, MaxStreamConnectionsPerUser int
	// MaxWatchers bounds the watchers of the server: each single watch
	// and observer, and every live watcher of every stream of many
	// watchers; MaxWatchersPerUser those of one user, or of one client
	// address with auth off. Past either a new watch answers 429.
	MaxWatchers, MaxWatchersPerUser int
	// WriteTimeout bounds how long a client may take none of what the
	// server sends it: each 64 KiB of an answer, and of a send on a
	// stream. One that takes nothing for this long is cut off. Zero means
	// DefaultWriteTimeout.
	WriteTimeout time.Duration
	// SnapshotWriteTimeout bounds each write of a snapshot to its client:
	// one that takes nothing for this long is cut off. Zero means
	// DefaultSnapshotWriteTimeout.
	SnapshotWriteTimeout time.Duration
}

// Handler serves the API. Create it with NewHandler.
type Handler struct {
	cfg      wiring
	router   chi.Router
	methods  methodIndex // the Allow header of a 405
	metrics  *metrics.Metrics
	tokens   wire.Tokens
	ids      *requestIDs
	inflight *semaphore.Weighted
	imports  *semaphore.Weighted // bytes of the imports in flight
	held     *semaphore.Weighted // bytes of large answers being sent
	// shuttingDown makes /health answer 503 while the server stops.
	shuttingDown atomic.Bool
	// streams are the open watch streams, which Close and Shutdown end.
	streams *sink.Set
	// wstreams are the streams of many watchers (/v1/watch/streams).
	wstreams *multi.Registry
	// streamConns and watchers count what clients hold against
	// MaxStreamConnections and MaxWatchers (quota.go).
	streamConns, watchers *quota
	// openAPIValid validates the OpenAPI document once, when it is first
	// asked for.
	openAPIValid func() error
}

// wiring is what a Handler works with, given to NewHandler, beside its
// tunables.
type wiring struct {
	Config
	// Backend is the store the API serves.
	Backend Backend
	// Auth serves the auth endpoints; nil serves none.
	Auth *auth.Store
	// Authorizer decides every request: Auth's policy, or allowAll
	// without it.
	Authorizer Authorizer
	// Logger receives one line per request and every unexpected error.
	Logger zerolog.Logger
}

// NewHandler returns the API's handler, serving b. a serves the auth
// endpoints and, once auth is enabled, authorizes every request; nil
// serves no auth and allows everything. log receives one line per
// request and every unexpected error.
func NewHandler(b Backend, a *auth.Store, log zerolog.Logger, cfg Config) *Handler {
	var authz Authorizer = allowAll{}
	if a != nil {
		authz = authAuthorizer{a: a}
	}
	return newHandler(wiring{Config: cfg, Backend: b, Auth: a, Authorizer: authz, Logger: log})
}

// newHandler returns the handler of cfg, its zero tunables defaulted.
// Tests give it an Authorizer of their own.
func newHandler(cfg wiring) *Handler {
	if cfg.MaxRequestBytes <= 0 {
		cfg.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if cfg.MaxInflightRequestBytes <= 0 {
		cfg.MaxInflightRequestBytes = DefaultMaxInflightRequestBytes
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if cfg.MaxImportBytes <= 0 {
		cfg.MaxImportBytes = DefaultMaxImportBytes
	}
	if cfg.MaxHeldAnswerBytes <= 0 {
		cfg.MaxHeldAnswerBytes = DefaultMaxHeldAnswerBytes
	}
	if cfg.KeepAliveInterval <= 0 {
		cfg.KeepAliveInterval = DefaultKeepAliveInterval
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	if cfg.SnapshotWriteTimeout <= 0 {
		cfg.SnapshotWriteTimeout = DefaultSnapshotWriteTimeout
	}
	orDefault(&cfg.MaxStreamConnections, DefaultMaxStreamConnections)
	orDefault(&cfg.MaxStreamConnectionsPerUser, DefaultMaxStreamConnectionsPerUser)
	orDefault(&cfg.MaxWatchers, DefaultMaxWatchers)
	orDefault(&cfg.MaxWatchersPerUser, DefaultMaxWatchersPerUser)
	h := &Handler{
		cfg:      cfg,
		tokens:   wire.NewTokens(cfg.Backend.PageTokenKey()),
		ids:      newRequestIDs(),
		inflight: semaphore.NewWeighted(cfg.MaxInflightRequestBytes),
		imports:  semaphore.NewWeighted(cfg.MaxImportBytes),
		held:     semaphore.NewWeighted(cfg.MaxHeldAnswerBytes),
	}
	h.streams = sink.NewSet(func(err error) {
		h.cfg.Logger.Debug().Err(err).Msg("streams watch their own connections")
	})
	h.openAPIValid = sync.OnceValue(func() error {
		_, err := openapi.Load()
		return err
	})
	h.streamConns = newQuota(cfg.MaxStreamConnections, cfg.MaxStreamConnectionsPerUser,
		"streams open", "--max-stream-connections", "--max-stream-connections-per-user")
	h.watchers = newQuota(cfg.MaxWatchers, cfg.MaxWatchersPerUser, "watchers", "--max-watchers", "--max-watchers-per-user")
	h.wstreams = multi.New(cfg.WatchStreams, cfg.Backend, newStreamAuthority(cfg.Authorizer), watcherQuota{h.watchers})
	h.metrics = h.newMetrics()
	h.router = h.routes()
	// Walking routes this package declares fails only on a bug, which
	// every test would show: 405s would list no methods.
	h.methods, _ = newMethodIndex(h.router)
	return h
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
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// orDefault sets *v to def unless it is positive.
func orDefault[T int | int64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}
