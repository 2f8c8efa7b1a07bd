package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/rs/zerolog"

	"github.com/httpkv/httpkv/cmd/httpkv/internal/cli"
	"github.com/httpkv/httpkv/internal/daemon"
)

// version is reported by /v1/status.
const version = "0.1.0"

// run is httpkv: a subcommand, or the server of the command line, opened,
// served until ctx is done, shut down as the contract says (stop
// accepting, end watch streams with a canceled event, finish in-flight
// writes) and closed (daemon).
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
	dcfg, err := cfg.daemon()
	if err != nil {
		return err
	}
	crash, err := crashPoint(getenv, stderr, &dcfg)
	if err != nil {
		return err
	}
	stopPprof, err := startPprof(getenv, stderr)
	if err != nil {
		return err
	}
	defer stopPprof()
	srv, err := daemon.Open(ctx, dcfg, log, crash)
	if err != nil {
		return err
	}
	defer srv.Close()
	fmt.Fprintf(stdout, "httpkv %s serving on %s\n", version, srv.URL())
	return srv.Serve(ctx)
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
