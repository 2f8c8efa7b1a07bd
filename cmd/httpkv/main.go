package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/httpkv/httpkv/cmd/httpkv/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	status := cli.Report(run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr), os.Stderr)
	stop()
	os.Exit(status)
}
