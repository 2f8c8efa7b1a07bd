// Command buildetcd builds the etcd server pinned in
// internal/etcdtest/etcdserver into the user's cache, if it is not there
// yet, and prints its path:
//
//	export HTTPKV_ETCD_BIN=$(go run ./internal/etcdtest/buildetcd)
//
// .ci/run and bench/compare.sh use it so that tests and benchmarks run one
// binary built once.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/httpkv/httpkv/internal/etcdtest/etcdbin"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	path, err := etcdbin.Path(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "buildetcd:", err)
		os.Exit(1)
	}
	fmt.Println(path)
}
