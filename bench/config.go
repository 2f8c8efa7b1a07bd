package bench

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"
)

// Workloads the tool runs.
const (
	workloadPut   = "put"
	workloadGet   = "get"
	workloadRange = "range"
	workloadTxn   = "txn"
	workloadWatch = "watch"
	// workloadCatchup times one watcher catching up on --requests
	// revisions of history.
	workloadCatchup = "catchup"
)

// Kinds of server the tool talks to.
const (
	kindHTTPKV   = "httpkv"
	kindEtcd     = "etcd"      // etcd's HTTP/JSON gateway
	kindEtcdGRPC = "etcd-grpc" // etcd's gRPC API through clientv3
)

// SSE readers the watch workload can use against httpkv.
const (
	sseR3labs = "r3labs"
	sseLines  = "lines"
)

// stampLen is the width of the send time, in decimal unix nanoseconds, that
// starts every value the watch workload writes.
const stampLen = 19

// config is the command line.
type config struct {
	target       string   // the first of targets: the writers' and the KV workloads'
	targets      []string // watch: the watchers go to each in turn
	kind         string
	workload     string
	clients      int
	requests     int
	duration     time.Duration
	watchers     int
	keySize      int
	valueSize    int
	prefix       string
	keys         int
	rangeKeys    int
	rate         float64
	sseClient    string
	serverPID    int
	grpcConns    int
	watchStreams int
	openTimeout  time.Duration
	drainTimeout time.Duration
}

func parseConfig(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("httpkv-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: httpkv-bench [flags]\n       httpkv-bench null [--listen ADDR]\n\nLoads an httpkv, or an etcd through its gRPC API or its HTTP/JSON gateway,\nand prints throughput and latency percentiles. \"null\" serves httpkv's\nroutes with fixed answers and stores nothing: the ceiling of an HTTP server.\n\"httpkv bench ...\" runs this tool with the same arguments.\n\nflags:")
		fs.PrintDefaults()
	}
	fs.StringVar(&c.target, "target", "", "base URL of the server (default http://127.0.0.1:2378 for httpkv, http://127.0.0.1:2379 for etcd); for watch, a comma-separated list of servers of one store (gateways, members) spreads the watchers over them in turn, the writers using the first")
	fs.StringVar(&c.kind, "kind", kindHTTPKV, "httpkv, etcd-grpc for etcd's gRPC API (through clientv3), or etcd for etcd's HTTP/JSON gateway")
	fs.StringVar(&c.workload, "workload", workloadPut, "put, get, range, txn, watch, or catchup (--requests revisions written, then one watcher from the first of them, timed to its last event)")
	fs.IntVar(&c.clients, "clients", 16, "concurrent clients, each with one request in flight (watch: writers)")
	fs.IntVar(&c.requests, "requests", 0, "total requests (watch: puts); 0 runs for --duration")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "how long to run when --requests is 0")
	fs.IntVar(&c.watchers, "watchers", 1000, "watch: streaming watchers on --prefix")
	fs.IntVar(&c.keySize, "key-size", 16, "bytes per key, --prefix included (longer if the key numbers need it)")
	fs.IntVar(&c.valueSize, "value-size", 128, "bytes per value")
	fs.StringVar(&c.prefix, "prefix", "", "every key the tool writes or reads starts with this (default bench/WORKLOAD/)")
	fs.IntVar(&c.keys, "keys", 1000, "distinct keys that put, get and watch writers cycle through")
	fs.IntVar(&c.rangeKeys, "range-keys", 1000, "range: keys preloaded under --prefix and read by each request")
	fs.Float64Var(&c.rate, "rate", 0, "total requests per second over all clients; 0 is flat out")
	fs.StringVar(&c.sseClient, "sse-client", sseLines, "watch against httpkv: lines (a lean SSE line reader) or r3labs (github.com/r3labs/sse/v2)")
	fs.IntVar(&c.serverPID, "server-pid", 0, "the server's process id, to report the CPU it used (from /proc/PID/stat) and, for watch, its resident memory per idle watcher")
	fs.IntVar(&c.watchStreams, "watch-streams", 0, "watch against httpkv: carry the watchers, in turn, on this many streams of many watchers (/v1/watch/streams), one connection each; 0 opens a single watch (GET /v1/watch) per watcher")
	fs.IntVar(&c.grpcConns, "grpc-conns", 1, "etcd-grpc: gRPC connections that requests and watches are multiplexed on")
	fs.DurationVar(&c.openTimeout, "open-timeout", time.Minute, "watch: how long opening every watcher may take")
	fs.DurationVar(&c.drainTimeout, "drain-timeout", 30*time.Second, "watch: how long watchers may take to receive every event once the writers stop")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if c.prefix == "" {
		c.prefix = "bench/" + c.workload + "/"
	}
	if c.target == "" {
		c.target = "http://127.0.0.1:2378"
		if c.kind == kindEtcd || c.kind == kindEtcdGRPC {
			c.target = "http://127.0.0.1:2379"
		}
	}
	return c, c.validate()
}

func (c *config) validate() error {
	switch c.kind {
	case kindHTTPKV, kindEtcd, kindEtcdGRPC:
	default:
		return fmt.Errorf("--kind must be httpkv, etcd-grpc or etcd, not %q", c.kind)
	}
	c.targets = nil
	for target := range strings.SplitSeq(c.target, ",") {
		u, err := url.Parse(target)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("--target must be http(s) base URLs, not %q", target)
		}
		if c.kind == kindEtcdGRPC && u.Scheme != "http" {
			return fmt.Errorf("--kind etcd-grpc speaks plain gRPC: --target must be http:// URLs, not %q", target)
		}
		c.targets = append(c.targets, strings.TrimSuffix(target, "/"))
	}
	c.target = c.targets[0]
	if len(c.targets) > 1 && c.workload != workloadWatch {
		return errors.New("--target takes more than one URL for --workload watch only")
	}
	switch c.workload {
	case workloadPut, workloadGet, workloadRange, workloadTxn, workloadWatch, workloadCatchup:
	default:
		return fmt.Errorf("--workload must be put, get, range, txn, watch or catchup, not %q", c.workload)
	}
	switch c.sseClient {
	case sseLines, sseR3labs:
	default:
		return fmt.Errorf("--sse-client must be lines or r3labs, not %q", c.sseClient)
	}
	switch {
	case c.clients < 1:
		return errors.New("--clients must be at least 1")
	case c.requests < 0 || c.requests == 0 && c.duration <= 0:
		return errors.New("give a positive --requests or --duration")
	case c.grpcConns < 1:
		return errors.New("--grpc-conns must be at least 1")
	case c.watchStreams < 0:
		return errors.New("--watch-streams must not be negative")
	case c.watchStreams > 0 && c.kind != kindHTTPKV:
		return errors.New("--watch-streams is for --kind httpkv")
	case c.keys < 1:
		return errors.New("--keys must be at least 1")
	case c.rangeKeys < 1 || c.rangeKeys > 10000:
		return errors.New("--range-keys must be in [1, 10000]")
	case c.valueSize < 0 || c.keySize < 0 || c.rate < 0:
		return errors.New("--value-size, --key-size and --rate must not be negative")
	case c.workload == workloadCatchup && c.requests < 1:
		return errors.New("--workload catchup needs --requests: the revisions to catch up on")
	case c.workload == workloadWatch && c.watchers < 1:
		return errors.New("--watchers must be at least 1")
	case c.workload == workloadWatch && c.valueSize < stampLen:
		return fmt.Errorf("--value-size must be at least %d for watch: each value starts with its send time", stampLen)
	}
	return nil
}
