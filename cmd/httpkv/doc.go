// Command httpkv serves the httpkv key-value store: an etcd-style MVCC
// store with an HTTP/JSON API and Server-Sent-Events watch streams.
//
// With no arguments it serves on 127.0.0.1:2378 the embedded store
// (--backend embedded) with its data in ./httpkv.data; with --backend
// etcd it is a gateway to the etcd cluster of --etcd-endpoints (etcd.go).
// It only wires the backend (backend/embedded, backend/etcd) to the API
// (httpapi). Every flag is also
// read from the environment (HTTPKV_ and the flag's name in upper snake
// case). Subcommands (commands.go, the table the usage lists): "httpkv
// health" checks a running server, "httpkv snapshot" saves, describes
// and restores backups, "httpkv bench" runs the load tool,
// httpkv-bench (bench.go), and the data commands (get, put, watch,
// lock...: package internal/cli) are clients of a running server's API.
// "httpkv --help" and "httpkv COMMAND --help" print the usage and exit 0;
// a usage error exits 2 (cli.Report).
package main
