// Package bench is httpkv's load tool, the binary httpkv-bench
// (cmd/httpkv-bench; `httpkv bench [flags]` runs it too). It is a program
// of its own so that the server's binary carries none of it: not its
// clients of etcd, not its null server.
//
// It drives one server with the same workloads, so that servers can be
// measured in the same run and compared. --kind says how it talks:
//
//   - httpkv: httpkv's /v1 API, one connection per client and per watcher.
//   - etcd-grpc: etcd's gRPC API through clientv3, etcd's own client, as a
//     Go service talks to etcd: every request and watch multiplexed on
//     --grpc-conns HTTP/2 connections (one by default), all watches of a
//     connection on one gRPC watch stream.
//   - etcd: etcd's HTTP/JSON gateway (/v3/kv/* and the streaming POST
//     /v3/watch), one connection per client and per watcher.
//
// `httpkv-bench null` serves httpkv's routes with fixed answers of the
// same shape and stores nothing (a put only goes out to the watchers of
// its key): the ceiling of an HTTP server on the machine, measured with
// --kind httpkv. bench/compare.sh runs all four side by side.
//
// The workloads:
//
//   - put: clients put keys of --key-size with values of --value-size.
//   - get: clients get keys preloaded beforehand.
//   - range: --range-keys keys are preloaded under --prefix; each request
//     reads them all.
//   - txn: each client owns a key and compares-and-puts it in a loop
//     (compare its mod revision, then put), as an optimistic lock does.
//   - watch: --watchers streaming watchers on --prefix and --clients
//     writers putting under it. Every value starts with the time its put was
//     sent, so each watcher measures send-to-receipt latency; the tool sums
//     the events delivered over all watchers. With --server-pid it also
//     reports the server's resident memory per idle watcher.
//
// Throughput and latency percentiles (p50, p90, p99, max) are printed as a
// small table. Run `httpkv-bench -h` for every flag.
package bench
