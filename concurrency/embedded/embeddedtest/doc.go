// Package embeddedtest runs the embedded store as the server wires it,
// for tests of locks and elections: mvcc with a lessor, the watchable
// store over it, the loop that revokes expired leases, and the
// concurrency backend over all that. It is for _test.go files only.
package embeddedtest
