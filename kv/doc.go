// Package kv is the vocabulary every backend of httpkv speaks and the API
// consumes: key versions, events, the requests and results of range, put,
// delete, txn and history reads, watch requests and responses, leases,
// alarms and status figures, and the errors they fail with.
//
// The concepts are etcd v3's, one to one: revisions {main, sub}, a key's
// create and mod revisions, version and lease, txns of compares and ops,
// compaction, per-revision watch batches. So the embedded store (package
// mvcc with watch, lease and auth, composed by backend/embedded) and a
// gateway over an etcd cluster both produce these types, and package
// httpapi, which turns them into HTTP, knows no more of either.
//
// Keys are selected by a Key and an End read as a keyrange.Range: End
// empty for one key, "\x00" for every key from Key on.
//
// The validation rules here (Validate methods) are etcd's, so that a
// request refused by one backend is refused by the other with the same
// error. Errors are sentinels that callers tell apart with errors.Is;
// httpapi maps each to a status and a code in one table.
package kv
