package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/rs/zerolog"

	"github.com/httpkv/httpkv/auth"
	"github.com/httpkv/httpkv/backend/embedded"
	"github.com/httpkv/httpkv/backend/etcd"
	"github.com/httpkv/httpkv/cmd/httpkv/internal/cli"
	"github.com/httpkv/httpkv/compactor"
	"github.com/httpkv/httpkv/httpapi"
	"github.com/httpkv/httpkv/lease"
	"github.com/httpkv/httpkv/mvcc"
)

// version is reported by /v1/status.
const version = "0.1.0"

// run opens the store, serves until ctx is done, then shuts down as the
// contract says: stop accepting, end watch streams with a canceled event,
// finish in-flight writes, close the store.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if leading, ok := cli.Leading(args); ok {
		args = leading
	}
	if c, ok := findCommand(args); ok {
		return c.run(ctx, args[1:], getenv, stdout, stderr)
	}
	if len(args) > 0 && isHelp(args[0]) {
		return serverHelp(getenv, stdout)
	}
	cfg, err := parseConfig(args, getenv, stderr)
	if err != nil {
		return helpRequested(nil, err)
	}
	log, err := newLogger(cfg, stderr)
	if err != nil {
		return err
	}
	cfg.connectionLimits(raiseOpenFiles(), log)
	compaction, err := compactor.ParseConfig(cfg.autoCompactionMode, cfg.autoCompactionRetention)
	if err != nil {
		return err
	}

	crash, err := crashPoint(getenv, stderr)
	if err != nil {
		return err
	}
	stopPprof, err := startPprof(getenv, stderr)
	if err != nil {
		return err
	}
	defer stopPprof()
	b, err := openBackend(ctx, cfg, compaction, crash, log)
	if err != nil {
		return err
	}
	defer b.Close()

	handler := httpapi.NewHandler(httpapi.Config{
		Backend:            b,
		Auth:               b.Auth(),
		Logger:             log,
		Version:            version,
		CORSAllowedOrigins: cfg.corsOrigins(),
		MaxRequestBytes:    cfg.maxRequestBytes,
		MaxResponseBytes:   cfg.maxResponseBytes,

		MaxInflightRequestBytes:     cfg.maxInflightRequestBytes,
		MaxHeldAnswerBytes:          cfg.maxHeldAnswerBytes,
		MaxStreamConnections:        cfg.maxStreamConnections,
		MaxStreamConnectionsPerUser: cfg.maxStreamConnectionsPerUser,
		MaxWatchers:                 cfg.maxWatchers,
		MaxWatchersPerUser:          cfg.maxWatchersPerUser,
		MaxImportBytes:              cfg.maxImportBytes,
		WatchStreams: httpapi.WatchStreamConfig{
			IdleTimeout:       cfg.watchStreamIdleTimeout,
			MaxStreams:        cfg.maxWatchStreams,
			MaxStreamsPerUser: cfg.maxWatchStreamsPerUser,
			MaxWatchers:       cfg.maxWatchersPerStream,
			BufferBytes:       cfg.watchStreamBufferBytes,
			TotalBufferBytes:  cfg.watchStreamBufferTotalBytes,
			ResumeBytes:       cfg.watchStreamResumeBytes,
		},
	})
	ln, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return err
	}
	// Past --max-connections, a few spare connections answer /health and
	// /metrics only, then new connections wait in the kernel's backlog
	// until one closes: each accepted one costs a goroutine, its buffers
	// and a descriptor.
	ln = newLimitListener(ln, cfg.maxConnections).withSpares(spareConnections(cfg.maxConnections))
	var answers netHTTPAnswers
	srv := &http.Server{
		Handler: answers.Handler(handler),
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
	scheme := "http"
	if cfg.tlsCertFile != "" {
		scheme = "https"
	}
	ev := log.Info().Str("addr", ln.Addr().String()).Str("url", scheme+"://"+ln.Addr().String()).
		Int64("revision", b.Rev()).Str("backend", cfg.backend)
	if cfg.backend == "etcd" {
		ev = ev.Strs("etcd_endpoints", cfg.etcd.endpointList()).Str("etcd_namespace", cfg.etcd.namespace)
	} else {
		ev = ev.Str("data_dir", cfg.dataDir)
	}
	ev.Msg("listening")
	fmt.Fprintf(stdout, "httpkv %s serving on %s://%s\n", version, scheme, ln.Addr())

	serveErr := make(chan error, 1)
	go func() {
		if cfg.tlsCertFile != "" {
			serveErr <- srv.ServeTLS(ln, cfg.tlsCertFile, cfg.tlsKeyFile)
		} else {
			serveErr <- srv.Serve(ln)
		}
	}()

	select {
	case err := <-serveErr:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info().Msg("shutting down")
	handler.ShuttingDown()
	graceCtx, cancel := context.WithTimeout(context.Background(), cfg.shutdownGrace)
	defer cancel()
	shutdownDone := make(chan error, 1)
	// srv.Shutdown stops accepting at once, then waits for requests to
	// end; the handler ends the watch streams (with "shutting down"),
	// those on connections they took over included, which srv does not
	// track. Both wait --shutdown-grace at most, whatever clients do:
	// past it, the handler closes the connections streams took over, and
	// srv.Close the others, which ends every send still blocked on a
	// client that stopped reading.
	go func() { shutdownDone <- srv.Shutdown(graceCtx) }()
	streamsErr := handler.Shutdown(graceCtx)
	if err := <-shutdownDone; err != nil || streamsErr != nil {
		srv.Close()
		log.Warn().Dur("grace", cfg.shutdownGrace).Msg("requests and streams still running at shutdown were cut")
	}
	handler.Close()
	if err := <-serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info().Msg("stopped")
	return nil
}

func newLogger(cfg config, stderr io.Writer) (zerolog.Logger, error) {
	level, err := zerolog.ParseLevel(cfg.logLevel)
	if err != nil {
		return zerolog.Logger{}, fmt.Errorf("--log-level: %w", err)
	}
	var w io.Writer
	switch cfg.logFormat {
	case "json":
		w = stderr
	case "console":
		w = zerolog.ConsoleWriter{Out: stderr, TimeFormat: time.RFC3339}
	default:
		return zerolog.Logger{}, fmt.Errorf("--log-format must be json or console, not %q", cfg.logFormat)
	}
	return zerolog.New(w).Level(level).With().Timestamp().Logger(), nil
}

// backend is what run serves: the API's Backend, with the auth store
// whose state it keeps.
type backend interface {
	httpapi.Backend
	Auth() *auth.Store
	Close() error
}

// openBackend opens the backend --backend names: the embedded store in
// --data-dir, or a gateway to an etcd cluster. crash, nil unless a test
// sets a crash point (crashpoint.go), commits the embedded store's
// batches.
// A gateway's streams of many watchers are the deployment's: the etcd
// backend keeps their records.
var _ httpapi.StreamStore = (*etcd.Backend)(nil)

func openBackend(ctx context.Context, cfg config, compaction compactor.Config, crash mvcc.Committer, log zerolog.Logger) (backend, error) {
	if cfg.backend == "etcd" {
		b, err := openEtcd(ctx, cfg, log)
		if err != nil {
			return nil, err
		}
		return b, nil
	}
	b, err := embedded.Open(cfg.dataDir, embedded.Options{
		Store: mvcc.Options{
			NoFsync:    cfg.unsafeNoFsync,
			QuotaBytes: cfg.quotaBackendBytes,
			MaxTxnOps:  cfg.maxTxnOps,
			Committer:  crash,
		},
		Watch:      cfg.watchOptions(),
		Lease:      lease.Config{MaxLeases: cfg.maxLeases},
		Auth:       auth.Config{TokenTTL: cfg.authTokenTTL, BcryptCost: cfg.bcryptCost},
		Compaction: compaction,
		OnError:    func(err error) { log.Error().Err(err).Msg("background work failed") },
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}
