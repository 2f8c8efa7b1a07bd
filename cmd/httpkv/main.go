package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/httpkv/httpkv/bench"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	if len(os.Args) > 1 && os.Args[1] == "bench" {
		err = bench.Run(ctx, os.Args[2:], os.Stdout, os.Stderr)
	} else {
		err = run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "httpkv:", err)
		os.Exit(1)
	}
}
