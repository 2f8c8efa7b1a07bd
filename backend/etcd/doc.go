// Package etcd serves httpkv's API from an etcd cluster: a gateway
// behind the API's Backend interface (httpapi.Backend) that keeps no
// state of its own, so that any number of gateways answer for one
// deployment and any of them answers any request.
//
// Revisions, txns, leases, compaction, alarms and snapshots are etcd's:
// each call of the interface is one or a few etcd requests, through
// go.etcd.io/etcd/client/v3, and etcd's errors become package kv's, so
// that the API answers with the codes it gives over the embedded store.
//
// # Layout in etcd
//
// A deployment lives under one key prefix, its namespace N
// (--etcd-namespace; empty for the whole key space):
//
//	N + "kv/" + key     the API's keys: the API never shows the prefix
//	N + "auth/" + ...   users, roles, the enabled flag and the key that
//	                    signs tokens (see auth.go)
//	N + "lease/" + ID   a record of each lease of the deployment, attached
//	                    to it (see lease_records.go)
//	N + "streams/" + id, N + "streamowners/" + ...
//	                    the streams of many watchers of the deployment, on
//	                    leases of their own (see streams.go)
//
// So a range of every key is the range of N+"kv/", and nothing the API
// can name reaches auth's records or the leases'. Lease IDs are the
// cluster's, as in etcd's own namespace proxy; the records make the
// leases the deployment's: it sees no other.
//
// # Watches
//
// A gateway holds one upstream etcd watch over its namespace's keys,
// whatever its number of watchers (upstream.go), as kube-apiserver's
// watch cache does, and one over its auth state (authwatch.go). What it receives goes into a window of recent revisions bounded
// in bytes (window.go) and is published to the same watch scheduler the
// embedded store uses (package watch): synced watchers get it at once,
// and watchers behind are caught up from the window or, for revisions
// older than it, from etcd itself by a watch of their own from that
// revision (replay.go), then join the shared stream without a gap or a
// duplicate. When the upstream watch breaks, it resumes from the last
// revision it saw.
//
// # Availability
//
// A prober asks every member, four times a second, for a read it serves
// only with a leader (prober.go). While none answers, calls fail at once
// with why, and calls waiting on etcd end with it; while one does, a call
// may take Options.RequestTimeout.
//
// # Revisions
//
// The gateway's revision (Rev) is the newest it has seen in any answer
// of etcd or on its upstream watch: a watch "from now" starts after it,
// so a client that wrote through this gateway never sees its own write
// come back on a watch it opens afterwards. A watch from a revision the
// gateway has not seen yet waits for it.
package etcd
