// Package tests holds the end-to-end tests of the API and the command line:
// each starts the real binary (over the embedded store, or over etcd when
// HTTPKV_TEST_BACKEND=etcd) and talks to it as a client would.
//
// The console, the documents, the crash tests and the gateways to etcd
// are in packages of their own beside this one, so that each has its own
// share of go test's time limit; all of them share the harness in
// tests/e2e.
package tests
