package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// Run is the load tool, `httpkv-bench`: it parses args (its flags), runs
// the workload against the target and prints the report to stdout; or,
// as `httpkv-bench null`, serves the null server until ctx is done. A run
// in which some requests failed still prints its report, then returns an
// error saying what failed.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "null" {
		return runNull(ctx, args[1:], stdout, stderr)
	}
	cfg, err := parseConfig(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	need := uint64(cfg.clients + 256)
	if cfg.workload == workloadWatch {
		need += uint64(cfg.watchers)
	}
	if got, err := raiseOpenFiles(need); err != nil || got < need {
		fmt.Fprintf(stderr, "httpkv-bench: could not raise the open files limit to %d (have %d, %v): connections may fail\n", need, got, err)
	}
	// One client per target, each with the connections of all the
	// watchers: they go to each in turn.
	var srvs []server
	defer func() {
		for _, s := range srvs {
			s.Close()
		}
	}()
	for _, target := range cfg.targets {
		c := cfg
		c.target = target
		srv, err := newServer(c)
		if err != nil {
			return err
		}
		srvs = append(srvs, srv)
	}

	fmt.Fprintf(stdout, "kind=%s target=%s workload=%s clients=%d key-size=%d value-size=%d prefix=%q",
		cfg.kind, strings.Join(cfg.targets, ","), cfg.workload, cfg.clients, cfg.keySize, cfg.valueSize, cfg.prefix)
	switch cfg.workload {
	case workloadRange:
		fmt.Fprintf(stdout, " range-keys=%d", cfg.rangeKeys)
	case workloadWatch:
		fmt.Fprintf(stdout, " watchers=%d", cfg.watchers)
		if cfg.kind == kindHTTPKV && cfg.watchStreams > 0 {
			fmt.Fprintf(stdout, " watch-streams=%d", cfg.watchStreams)
		} else if cfg.kind == kindHTTPKV {
			fmt.Fprintf(stdout, " sse-client=%s", cfg.sseClient)
		}
	}
	if cfg.kind == kindEtcdGRPC {
		fmt.Fprintf(stdout, " grpc-conns=%d", cfg.grpcConns)
	}
	if cfg.rate > 0 {
		fmt.Fprintf(stdout, " rate=%g/s", cfg.rate)
	}
	fmt.Fprintln(stdout)

	var rows []result
	switch cfg.workload {
	case workloadWatch:
		rows, err = runWatch(ctx, cfg, srvs, stdout)
	case workloadCatchup:
		var r result
		r, err = runCatchup(ctx, cfg, srvs[0], stdout)
		if r.hist != nil {
			rows = []result{r}
		}
	default:
		var r result
		r, err = runKV(ctx, cfg, srvs[0], stdout)
		if r.hist != nil {
			rows = []result{r}
		}
	}
	if len(rows) > 0 && (err == nil || errors.Is(err, errPartial)) {
		if perr := printReport(stdout, rows); perr != nil {
			return perr
		}
	}
	return err
}
