// Package concurrency provides distributed locks and leader elections
// over leases, with the semantics of etcd's v3lock and v3election
// services (and of client/v3/concurrency, which they are built on).
//
// A lock or an election called NAME is the set of keys under the prefix
// "NAME/". Each holder, waiter or candidate owns the key "NAME/<lease ID
// in lowercase hex>", attached to its lease, so that a client that dies
// lets go when its lease expires. The key with the lowest create revision
// holds the lock (leads the election); the others queue behind it in
// create-revision order, each waiting only for the deletion of the key
// just before its own, so a release wakes one waiter, not all of them.
//
// The package knows nothing of HTTP nor of any store. It needs a
// Backend, in package kv's terms: txns that compare create revisions and
// leases, reads sorted by create revision, watches of a key or a range
// from a revision, and a lease's time to live. The API's backend
// (httpapi.Backend), the embedded store or an etcd cluster alike, serves
// each of these; httpapi adapts it, adding the caller's lease check to
// the txns.
//
// Waiting is bounded by a context and a timeout. A waiter that gives up,
// whatever the reason, deletes the key it put, with a context of its own
// since the caller's may be done: a client that disconnects while waiting
// leaves nothing in the queue.
package concurrency
