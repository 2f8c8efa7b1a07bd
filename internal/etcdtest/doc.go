// Package etcdtest starts real etcd clusters for tests: n members as
// separate processes on loopback ports, each with its data in the test's
// temporary directory, that a test can kill with SIGKILL, stop, restart
// and ask for the leader.
//
// The etcd run is the release pinned in etcdserver/ (a module of its own),
// built once by package etcdbin; see its doc for HTTPKV_ETCD_BIN. When no
// binary can be had, StartCluster skips the test, or fails it when CI is
// set, as every test needing a program does.
//
// Only _test.go files import this package: it takes a testing.TB and
// fails the test on errors.
//
//	c := etcdtest.StartCluster(t, 3)
//	cli := c.Client(t)
//	cli.Put(ctx, "k", "v")
//	c.Kill(c.Leader())
package etcdtest
