// Package mvcc is httpkv's multi-version storage engine.
//
// Every write transaction that changes something creates a new global
// revision. A revision has a main part, shared by all writes of one
// transaction, and a sub part that counts the writes inside it, exactly as in
// etcd v3: the empty store is at revision 1 and the first put makes revision
// {2, 0}.
//
// History lives in a bbolt file in the "key" bucket, keyed by the big-endian
// revision (a trailing 't' marks a tombstone), so reading history in order is
// a cursor scan. An in-memory B-tree maps each user key to its keyIndex, the
// generations of revisions at which it was written; it is rebuilt from the
// file on Open.
//
// Writes run on one committer goroutine that owns the bbolt write
// transaction: it drains the queue of write requests, applies them in order,
// commits once (one fsync for the whole batch) and only then answers each
// caller. Readers never see a revision before it is durable.
//
// The store owns its commit point: every write, whatever path it takes
// (Put, DeleteRange, Txn, Write for a lease revoke or an auth change),
// goes through the committer, which tells the registered observers
// (Observe) what each batch changed, in revision order, once it is durable
// and before any writer of it is answered. The watch scheduler is one, so
// nothing can write around the watchers.
//
// Memory that mirrors the file — the compact revision, a lease manager's
// leases and the keys attached to them — changes only once the commit
// that makes it true has succeeded: a write stages such a change
// (WriteTxn.Stage), and the committer applies it after the commit, or
// undoes it if the write or the commit fails. A Committer given to Open
// wraps the commit itself, the point where fault tests make it fail.
//
// Snapshot copies the whole file as one read transaction sees it, for
// backups; it holds no lock while it streams, so writers never wait for it
// (see Snapshot for how). CheckFile verifies such a copy's pages before
// it is trusted, and InstallFile puts one in place. Open itself walks the
// file's pages before bbolt does and checks every record it restores
// against what the store writes, so that an edited file is refused as
// ErrCorrupt instead of making bbolt panic or the store misbehave.
//
// mvcc knows nothing of HTTP or JSON. Requests, results, events and their
// errors are package kv's, the vocabulary every backend shares; the keys a
// request selects are a keyrange.Range.
package mvcc
