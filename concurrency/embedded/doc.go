// Package embedded lets locks and elections (package concurrency) run
// over the embedded store: the watchable store's txns, reads and watches,
// and the lessor's view of which leases are alive.
package embedded
