// Command httpkv-bench is httpkv's load tool (package bench): it loads an
// httpkv, or an etcd through its gRPC API or its HTTP/JSON gateway, and
// prints throughput and latency percentiles; `httpkv-bench null` serves
// the null server. `httpkv bench ...` runs it with the same arguments.
// Run `httpkv-bench -h` for its flags, and see docs/performance.md.
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
	err := bench.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "httpkv-bench:", err)
		os.Exit(1)
	}
}
