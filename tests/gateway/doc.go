// Package gateway tests gateways to etcd as a deployment runs them: two
// or more in front of one cluster of their own, sharing auth and streams
// of many watchers, killed mid-stream, with members killed under them
// (health answers, no quorum, a linearizability check of their history);
// deployments in namespaces of one cluster, kept apart; answers compared
// with etcd's own; and the flags a gateway refuses.
//
// Each test starts its etcd members itself, whichever backend the tests
// of package tests run over; TestGatewayEtcdDiff and
// TestGatewaysLinearizable run in the etcd pass (HTTPKV_TEST_BACKEND=etcd)
// or when named with -run.
package gateway
