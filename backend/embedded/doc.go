// Package embedded is httpkv's store on one machine, behind the API's
// Backend interface (httpapi.Backend): it composes the storage engine
// (mvcc), the watch scheduler (watch), the lease manager (lease), auth's
// persisted state (auth) and the auto-compactor (compactor) over one
// bbolt file, and speaks package kv's types to its callers.
//
// Open wires them so that every write goes through the store's one commit
// point: the scheduler observes the store's commits, the lease manager
// writes through the store (a revoke's deletes are one revision watchers
// see together), and auth writes its users and roles in the store's write
// transaction. Memory that mirrors the file (the compact revision, leases
// and their keys, auth's users and roles) changes only once the commit
// that makes it true has succeeded (mvcc.WriteTxn.Stage).
//
// Close closes them in reverse order: the compactor, the lease manager and
// lessor, the scheduler (its watchers end with "shutting down"), then the
// store.
package embedded
