// Package daemon wires a server: the backend its Config names (the
// embedded store, or a gateway over etcd), the API's handler over it,
// and the HTTP server on a bounded listener. It is the one wiring of
// httpkv: cmd/httpkv's run parses the command line into a Config and
// calls it, and the end-to-end tests that need to reach inside a server
// (its store's commits, its figures) start it in process the same way.
//
// Every part is given what it works with as arguments and its tunables
// as options: the backends their error sink and the fault tests'
// committer, the handler its backend, auth store and logger.
package daemon
