// Package bench is httpkv's load tool, run as `httpkv bench [flags]`.
//
// It drives one server, an httpkv (the /v1 API) or an etcd 3.4 (its
// HTTP/JSON gateway: /v3/kv/* and the streaming POST /v3/watch), with the
// same workloads, so the two can be measured in the same run and compared:
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
// small table. Run `httpkv bench -h` for every flag.
package bench
