package etcdtest

import "testing"

// Binary returns the etcd binary the clusters of this package run, for a
// test that starts etcd its own way (the README's cluster, run as a reader
// would run it). Like StartCluster, it skips the test when there is none,
// or fails it when CI is set.
func Binary(tb testing.TB) string {
	tb.Helper()
	return binary(tb)
}

// FreePorts returns n distinct loopback ports, below the ephemeral range,
// that were free a moment ago: ports for etcd members and servers that a
// test starts itself and may restart on the same ports.
func FreePorts(tb testing.TB, n int) []int {
	tb.Helper()
	return freePorts(tb, n)
}
