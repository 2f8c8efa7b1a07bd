package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/httpkv/httpkv/cmd/httpkv/internal/cli"
)

func main() {
	// The interrupt stays caught until the process exits: one that comes
	// after the first (timeout(1) signals its command and then its whole
	// process group, so a watch it stops gets SIGINT twice) must not turn
	// the clean end the first began into a death by signal, exit 130.
	ctx, _ := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	os.Exit(cli.Report(run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr), os.Stderr))
}
