package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/httpkv/httpkv/auth"
	"github.com/httpkv/httpkv/backend/embedded"
	"github.com/httpkv/httpkv/backend/etcd"
	"github.com/httpkv/httpkv/httpapi"
	"github.com/httpkv/httpkv/mvcc"
	"github.com/httpkv/httpkv/stream/multi"
)

// Defaults for Config fields left zero.
const (
	DefaultMaxConnections = 20000
	DefaultShutdownGrace  = 10 * time.Second
)

// Config is a server: the tunables of each part, as the command line
// gives them. The zero Config serves the embedded store in the current
// directory on a random port of every address.
type Config struct {
	// Listen is the address to serve on ("127.0.0.1:0" picks a port).
	Listen string
	// TLSCertFile and TLSKeyFile, when set, serve HTTPS (and HTTP/2).
	TLSCertFile, TLSKeyFile string
	// MaxConnections bounds the client connections open at once: past
	// it new ones wait in the kernel's backlog. Zero means
	// DefaultMaxConnections.
	MaxConnections int
	// ShutdownGrace bounds how long requests and watch streams get to
	// finish once the server stops. Zero means DefaultShutdownGrace.
	ShutdownGrace time.Duration
	// Etcd, when not nil, makes the server a gateway over the etcd
	// cluster it names; else it serves the embedded store in DataDir.
	Etcd *etcd.Options
	// DataDir is the embedded store's directory.
	DataDir string
	// Embedded tunes the embedded store.
	Embedded embedded.Options
	// API tunes the API.
	API httpapi.Config
}

// Backend is what a server serves: the API's Backend, with the auth
// store whose state it keeps.
type Backend interface {
	httpapi.Backend
	Auth() *auth.Store
	Close() error
}

// Server is the API served from one backend on one listener: what `httpkv`
// runs, and what the in-process end-to-end tests start. Open it, Serve
// it, Close it.
type Server struct {
	cfg     Config
	log     zerolog.Logger
	backend Backend
	handler *httpapi.Handler
	ln      net.Listener
	http    *http.Server

	closeOnce sync.Once
	closeErr  error
}

// Open opens the backend and listens: the server is reachable at URL once
// it returns, and serves once Serve runs. log receives the server's lines
// and what fails in the background. commit, if not nil, commits the
// embedded store's batches (mvcc.Committer): the crash and fault tests'
// seam, nil in the server's binary.
func Open(ctx context.Context, cfg Config, log zerolog.Logger, commit mvcc.Committer) (*Server, error) {
	if cfg.MaxConnections <= 0 {
		cfg.MaxConnections = DefaultMaxConnections
	}
	if cfg.ShutdownGrace <= 0 {
		cfg.ShutdownGrace = DefaultShutdownGrace
	}
	b, err := openBackend(ctx, cfg, log, commit)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		b.Close()
		return nil, err
	}
	s := &Server{
		cfg:     cfg,
		log:     log,
		backend: b,
		handler: httpapi.NewHandler(b, b.Auth(), log, cfg.API),
		// Past MaxConnections, a few spare connections answer /health
		// and /metrics only, then new connections wait in the kernel's
		// backlog until one closes: each accepted one costs a goroutine,
		// its buffers and a descriptor.
		ln: newLimitListener(ln, cfg.MaxConnections).withSpares(spareConnections(cfg.MaxConnections)),
	}
	var answers netHTTPAnswers
	s.http = &http.Server{
		Handler: answers.Handler(s.handler),
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return markSpare(answers.Context(ctx, c), c)
		},
		ConnState:         answers.State,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		// No ReadTimeout or WriteTimeout: watch streams last as long as
		// their clients. The handler sets deadlines per request instead:
		// on bodies and answers of requests that are not streams, and on
		// each send of a stream.
	}
	return s, nil
}

// A gateway's streams of many watchers are the deployment's: the etcd
// backend keeps their records.
var _ multi.Store = (*etcd.Backend)(nil)

// openBackend opens the backend cfg names: a gateway to an etcd cluster,
// or the embedded store in its data directory.
func openBackend(ctx context.Context, cfg Config, log zerolog.Logger, commit mvcc.Committer) (Backend, error) {
	if cfg.Etcd != nil {
		b, err := etcd.Open(ctx, func(err error) { log.Warn().Err(err).Msg("etcd") }, *cfg.Etcd)
		if errors.Is(err, etcd.ErrOverlap) {
			// The backend speaks of namespaces; the command's is the flag.
			return nil, fmt.Errorf("--etcd-namespace %q: %w", cfg.Etcd.Namespace, err)
		}
		if err != nil {
			return nil, err
		}
		return b, nil
	}
	b, err := embedded.Open(cfg.DataDir, func(err error) { log.Error().Err(err).Msg("background work failed") }, commit, cfg.Embedded)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// URL is where the server answers: http://host:port, or https://.
func (s *Server) URL() string {
	scheme := "http"
	if s.cfg.TLSCertFile != "" {
		scheme = "https"
	}
	return scheme + "://" + s.ln.Addr().String()
}

// Backend returns what the server serves.
func (s *Server) Backend() Backend { return s.backend }

// Handler returns the API's handler.
func (s *Server) Handler() *httpapi.Handler { return s.handler }

// Serve serves until ctx is done, then shuts down as the contract says:
// stop accepting, end watch streams with a canceled event, finish the
// requests in flight, within ShutdownGrace whatever clients do. It
// returns early, with the error, if serving fails. Close still closes
// the backend.
func (s *Server) Serve(ctx context.Context) error {
	ev := s.log.Info().Str("addr", s.ln.Addr().String()).Str("url", s.URL()).Int64("revision", s.backend.Rev())
	if s.cfg.Etcd != nil {
		ev = ev.Str("backend", "etcd").Strs("etcd_endpoints", s.cfg.Etcd.Endpoints).Str("etcd_namespace", s.cfg.Etcd.Namespace)
	} else {
		ev = ev.Str("backend", "embedded").Str("data_dir", s.cfg.DataDir)
	}
	ev.Msg("listening")
	serveErr := make(chan error, 1)
	go func() {
		if s.cfg.TLSCertFile != "" {
			serveErr <- s.http.ServeTLS(s.ln, s.cfg.TLSCertFile, s.cfg.TLSKeyFile)
		} else {
			serveErr <- s.http.Serve(s.ln)
		}
	}()
	select {
	case err := <-serveErr:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	s.log.Info().Msg("shutting down")
	s.handler.ShuttingDown()
	graceCtx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownGrace)
	defer cancel()
	shutdownDone := make(chan error, 1)
	// http.Server.Shutdown stops accepting at once, then waits for
	// requests to end; the handler ends the watch streams (with "shutting
	// down"), those on connections they took over included, which the
	// server does not track. Both wait ShutdownGrace at most, whatever
	// clients do: past it, the handler closes the connections streams
	// took over, and http.Server.Close the others, which ends every send
	// still blocked on a client that stopped reading.
	go func() { shutdownDone <- s.http.Shutdown(graceCtx) }()
	streamsErr := s.handler.Shutdown(graceCtx)
	if err := <-shutdownDone; err != nil || streamsErr != nil {
		s.http.Close()
		s.log.Warn().Dur("grace", s.cfg.ShutdownGrace).Msg("requests and streams still running at shutdown were cut")
	}
	s.handler.Close()
	if err := <-serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	s.log.Info().Msg("stopped")
	return nil
}

// Close closes what Open opened, in reverse order: the listener and the
// connections still open (none after Serve returned from a shutdown), the
// handler's streams, then the backend. It is safe to call more than once.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.http.Close()
		s.ln.Close()
		s.handler.Close()
		s.closeErr = s.backend.Close()
	})
	return s.closeErr
}
