// Package e2e is the harness of the end-to-end tests: it builds the httpkv
// binary of this checkout once per test process, starts it (or etcd, or
// Chromium) for a test and stops it at cleanup, and holds the requests,
// checks and waits the test packages under tests/ share.
//
// Everything here takes a testing.TB and fails the test itself; nothing
// here is imported outside tests/.
package e2e
