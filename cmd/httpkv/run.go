package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/httpkv/httpkv/mvcc"
)

// run opens the store, serves until ctx is done, and closes what it opened
// in reverse order.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("httpkv", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := fs.String("data-dir", "./httpkv.data", "bbolt file and anything else persistent")
	noFsync := fs.Bool("unsafe-no-fsync", false, "skip fsync: for tests and benchmarks only")
	if err := fs.Parse(args); err != nil {
		return err
	}
	store, err := mvcc.Open(filepath.Join(*dataDir, "db"), mvcc.Options{NoFsync: *noFsync})
	if err != nil {
		return err
	}
	defer store.Close()
	fmt.Fprintf(stdout, "httpkv: store open at revision %d in %s\n", store.Rev(), *dataDir)
	<-ctx.Done()
	return nil
}
