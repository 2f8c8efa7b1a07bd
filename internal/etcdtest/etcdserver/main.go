// Command etcdserver is etcd's own server, built from a pinned release of
// go.etcd.io/etcd/server/v3 for the tests and benchmarks that compare
// httpkv with etcd or run it as a backend. It lives in a module of its own
// so that etcd's server dependencies stay out of httpkv's go.mod and out
// of `go test ./...`; internal/etcdtest builds it once into a cache.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
