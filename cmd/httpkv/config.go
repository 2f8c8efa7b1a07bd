package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/httpkv/httpkv/cmd/httpkv/internal/cli"
	"github.com/httpkv/httpkv/httpapi"
	"github.com/httpkv/httpkv/stream/multi"
	"github.com/httpkv/httpkv/watch"
)

// config is the command line, each flag also read from the environment as
// HTTPKV_ and its name in upper snake case (--data-dir: HTTPKV_DATA_DIR).
// A flag given on the command line wins over the environment.
type config struct {
	listen                      string
	backend                     string
	dataDir                     string
	quotaBackendBytes           int64
	maxRequestBytes             int64
	maxResponseBytes            int64
	maxInflightRequestBytes     int64
	maxImportBytes              int64
	maxHeldAnswerBytes          int64
	maxConnections              int
	maxStreamConnections        int
	maxStreamConnectionsPerUser int
	maxWatchers                 int
	maxWatchersPerUser          int
	shutdownGrace               time.Duration
	writeTimeout                time.Duration
	maxTxnOps                   int
	maxLeases                   int
	autoCompactionMode          string
	autoCompactionRetention     string
	watchProgressNotifyInterval time.Duration
	maxWatchPendingBytes        int64
	watchStreamIdleTimeout      time.Duration
	maxWatchStreams             int
	maxWatchStreamsPerUser      int
	maxWatchersPerStream        int
	watchStreamBufferBytes      int64
	watchStreamBufferTotalBytes int64
	watchStreamResumeBytes      int64
	authTokenTTL                time.Duration
	bcryptCost                  int
	tlsCertFile, tlsKeyFile     string
	corsAllowedOrigins          string
	logLevel, logFormat         string
	unsafeNoFsync               bool
	etcd                        etcdConfig
}

func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("httpkv", flag.ContinueOnError)
	// The flag package's own messages and usage are not printed: --help
	// prints the usage below, and a mistake a line that says what to do.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.StringVar(&c.listen, "listen", "127.0.0.1:2378", "address to serve on")
	fs.StringVar(&c.backend, "backend", "embedded", "where the keys live: embedded, a store in --data-dir; or etcd, a gateway to the etcd cluster of --etcd-endpoints")
	fs.StringVar(&c.dataDir, "data-dir", "./httpkv.data", "bbolt file and anything else persistent (embedded store only)")
	fs.Int64Var(&c.quotaBackendBytes, "quota-backend-bytes", 2<<30, "NOSPACE alarm above this many backend bytes (embedded store only: a gateway's quota is etcd's)")
	fs.Int64Var(&c.maxRequestBytes, "max-request-bytes", 3<<19, "larger request bodies answer 413")
	fs.Int64Var(&c.maxResponseBytes, "max-response-bytes", 64<<20, "most key and value bytes of one answer (a list page, a txn's ranges); larger answer 400")
	fs.Int64Var(&c.maxInflightRequestBytes, "max-inflight-request-bytes", 64<<20, "most request body bytes received or handled at once; past it requests answer 429")
	fs.Int64Var(&c.maxImportBytes, "max-import-bytes", httpapi.DefaultMaxImportBytes, "largest body of POST /v1/import, and most import bytes received or applied at once; larger answer 413")
	fs.Int64Var(&c.maxHeldAnswerBytes, "max-held-answer-bytes", 256<<20, "most bytes of large answers (over 64 KiB) being sent to clients at once; past it requests answer 429")
	fs.IntVar(&c.maxConnections, "max-connections", 0, "most open client connections (0: the open-file limit, raised to its hard limit, less a sixteenth of it, at least 128); past it a few more are accepted to answer /health and /metrics only, then new ones wait to be accepted")
	fs.IntVar(&c.maxStreamConnections, "max-stream-connections", 0, "most streams open at once, each holding a connection: watches, readers of streams of many watchers, observers (0: three quarters of --max-connections, at most 16384); past it a new one answers 429")
	fs.IntVar(&c.maxStreamConnectionsPerUser, "max-stream-connections-per-user", httpapi.DefaultMaxStreamConnectionsPerUser, "most streams open at once for one user, or one client address with auth off")
	fs.IntVar(&c.maxWatchers, "max-watchers", httpapi.DefaultMaxWatchers, "most watchers on the server: each watch and observer, and every watcher of every stream of many watchers; past it a new one answers 429")
	fs.IntVar(&c.maxWatchersPerUser, "max-watchers-per-user", httpapi.DefaultMaxWatchersPerUser, "most watchers of one user, or of one client address with auth off")
	fs.DurationVar(&c.shutdownGrace, "shutdown-grace", 10*time.Second, "on SIGTERM, how long requests and watch streams get to finish before their connections are closed")
	fs.DurationVar(&c.writeTimeout, "write-timeout", httpapi.DefaultWriteTimeout, "a client that takes none of what the server sends for this long is cut off (each 64 KiB of an answer or of a watch stream's message, each write of a snapshot)")
	fs.IntVar(&c.maxTxnOps, "max-txn-ops", 128, "most compares, and ops per branch, of a txn")
	fs.IntVar(&c.maxLeases, "max-leases", 1_000_000, "most leases alive at once (over etcd, in this deployment's namespace); past it a grant answers 429")
	fs.StringVar(&c.autoCompactionMode, "auto-compaction-mode", "periodic", "periodic or revision (embedded store only: over etcd, etcd compacts)")
	fs.StringVar(&c.autoCompactionRetention, "auto-compaction-retention", "0", "a duration (1h) or a revision count; 0 is off (embedded store only)")
	fs.DurationVar(&c.watchProgressNotifyInterval, "watch-progress-notify-interval", 10*time.Minute, "idle watchers that asked for progress get one this often")
	fs.Int64Var(&c.maxWatchPendingBytes, "max-watch-pending-bytes", watch.DefaultMaxPendingBytes, "most bytes of events held for all watchers at once (queued, or being written to slow clients), what watchers share counted once; past it no watcher is given more, and catches up from history instead")
	fs.DurationVar(&c.watchStreamIdleTimeout, "watch-stream-idle-timeout", 60*time.Second, "a stream of many watchers (/v1/watch/streams) with no connection this long is dropped")
	fs.IntVar(&c.maxWatchStreams, "max-watch-streams", 10000, "most streams of many watchers on the server")
	fs.IntVar(&c.maxWatchStreamsPerUser, "max-watch-streams-per-user", 32, "most streams of many watchers per user, or per client address with auth off")
	fs.IntVar(&c.maxWatchersPerStream, "max-watchers-per-stream", 10000, "most watchers of one stream of many watchers")
	fs.Int64Var(&c.watchStreamBufferBytes, "watch-stream-buffer-bytes", 4<<20, "most bytes a stream of many watchers holds unwritten; past it its watchers catch up from history")
	fs.Int64Var(&c.watchStreamBufferTotalBytes, "watch-stream-buffer-total-bytes", multi.DefaultTotalBufferBytes, "most bytes all streams of many watchers hold together in their buffers, counted as encoded, the events they share once; past it no stream takes more, its watchers catch up from history, and streams whose readers stalled are let go of")
	fs.Int64Var(&c.watchStreamResumeBytes, "watch-stream-resume-bytes", 4<<20, "how much of what a stream of many watchers wrote it remembers, to resume exactly after Last-Event-ID")
	fs.DurationVar(&c.authTokenTTL, "auth-token-ttl", 5*time.Minute, "lifetime of tokens from POST /v1/auth/token")
	fs.IntVar(&c.bcryptCost, "bcrypt-cost", bcrypt.DefaultCost, "bcrypt cost of password hashes, 4 to 31 (as etcd's --bcrypt-cost)")
	fs.StringVar(&c.tlsCertFile, "tls-cert-file", "", "serve HTTPS (and HTTP/2) with this certificate")
	fs.StringVar(&c.tlsKeyFile, "tls-key-file", "", "the key of --tls-cert-file")
	fs.StringVar(&c.corsAllowedOrigins, "cors-allowed-origins", "", "comma list of origins allowed to call the API; * for any")
	fs.StringVar(&c.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&c.logFormat, "log-format", "json", "json, or console for humans")
	fs.BoolVar(&c.unsafeNoFsync, "unsafe-no-fsync", false, "skip fsync: for tests and benchmarks only (embedded store only)")
	c.etcd.addFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stderr)
			printUsage(fs)
			return c, err
		}
		return c, cli.FlagError("", fs, err)
	}
	if fs.NArg() > 0 {
		return c, cli.UnknownCommand("", fs.Arg(0), commandNames())
	}
	// set: each flag set explicitly, and how (checkScopes).
	set := make(map[string]string)
	fs.Visit(func(f *flag.Flag) { set[f.Name] = "--" + f.Name })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] != "" || err != nil {
			return
		}
		env := "HTTPKV_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v := getenv(env); v != "" {
			if e := fs.Set(f.Name, v); e != nil {
				err = fmt.Errorf("%s=%q: %w", env, v, e)
			}
			set[f.Name] = fmt.Sprintf("%s (--%s)", env, f.Name)
		}
	})
	if err != nil {
		return c, err
	}
	switch c.backend {
	case "embedded":
	case "etcd":
		if err := c.etcd.check(); err != nil {
			return c, err
		}
	default:
		return c, fmt.Errorf("--backend must be embedded or etcd, not %q", c.backend)
	}
	if err := checkScopes(c.backend, set); err != nil {
		return c, err
	}
	if (c.tlsCertFile == "") != (c.tlsKeyFile == "") {
		return c, fmt.Errorf("--tls-cert-file and --tls-key-file go together")
	}
	if c.bcryptCost < bcrypt.MinCost || c.bcryptCost > bcrypt.MaxCost {
		return c, fmt.Errorf("--bcrypt-cost must be between %d and %d", bcrypt.MinCost, bcrypt.MaxCost)
	}
	if c.quotaBackendBytes <= 0 || c.maxRequestBytes <= 0 || c.maxResponseBytes <= 0 || c.maxTxnOps <= 0 || c.maxLeases <= 0 ||
		c.shutdownGrace <= 0 || c.writeTimeout <= 0 || c.maxHeldAnswerBytes <= 0 || c.maxWatchPendingBytes <= 0 || c.maxImportBytes <= 0 {
		return c, fmt.Errorf("--quota-backend-bytes, --max-request-bytes, --max-response-bytes, --max-held-answer-bytes, --max-watch-pending-bytes, --max-import-bytes, --max-txn-ops, --max-leases, --shutdown-grace and --write-timeout must be positive")
	}
	if c.maxConnections < 0 || c.maxStreamConnections < 0 || c.maxStreamConnectionsPerUser <= 0 || c.maxWatchers <= 0 || c.maxWatchersPerUser <= 0 {
		return c, fmt.Errorf("--max-connections and --max-stream-connections must be positive, or 0 for their defaults; --max-stream-connections-per-user, --max-watchers and --max-watchers-per-user positive")
	}
	if c.watchStreamIdleTimeout <= 0 || c.maxWatchStreams <= 0 || c.maxWatchStreamsPerUser <= 0 || c.maxWatchersPerStream <= 0 ||
		c.watchStreamBufferBytes <= 0 || c.watchStreamBufferTotalBytes <= 0 || c.watchStreamResumeBytes <= 0 {
		return c, fmt.Errorf("--watch-stream-idle-timeout, --max-watch-streams, --max-watch-streams-per-user, --max-watchers-per-stream, --watch-stream-buffer-bytes, --watch-stream-buffer-total-bytes and --watch-stream-resume-bytes must be positive")
	}
	if c.maxInflightRequestBytes < c.maxRequestBytes {
		return c, fmt.Errorf("--max-inflight-request-bytes must be at least --max-request-bytes")
	}
	return c, nil
}

// watchOptions configures the watch scheduler of either backend.
func (c config) watchOptions() watch.Options {
	return watch.Options{ProgressInterval: c.watchProgressNotifyInterval, MaxPendingBytes: c.maxWatchPendingBytes}
}

func (c config) corsOrigins() []string {
	var out []string
	for _, o := range strings.Split(c.corsAllowedOrigins, ",") {
		if o = strings.TrimSpace(o); o != "" {
			out = append(out, o)
		}
	}
	return out
}
