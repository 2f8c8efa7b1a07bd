// Package lease is httpkv's lease manager: TTLs shared by many keys,
// expired on time and revoked in one revision.
//
// A Lessor holds every lease in memory: its granted TTL, its expiry and
// the keys attached to it. Grant and Revoke also write the lease's record
// (ID and granted TTL) to the "lease" bucket through the store's write
// transaction, so they commit atomically with that write. Of httpkv's
// packages lease imports only kv: it declares what it needs of the store
// (Txn, WriteTxn, Writer, ForEachFunc), and *Lessor satisfies
// mvcc.Lessor, through which the store reports which keys are put with
// which lease.
//
// # Memory follows the disk
//
// What readers see (TimeToLive, KeepAlive, Leases, Keys) changes only
// once the write that makes it true is committed: Grant and Revoke stage
// their change in the write (Txn.Stage), and the store applies it after
// the commit, or undoes it if the commit or the write fails. Until then
// only the store's committer sees it, so that a later request of the
// same batch finds a lease granted before it, and not one revoked before
// it (Lookup, Status).
//
// # Keys
//
// A put with a lease attaches the key, detaching it from any earlier
// lease; a put with an unknown lease fails in the store (Lookup) and
// writes nothing; a put that ignores the lease keeps the current one; a
// delete detaches. The store calls Attach and Detach once the write is
// committed; inside a write, Status reports the keys as that write sees
// them, attachments of the open batch included.
//
// # Manager
//
// A Manager owns the lifecycle over the store's one write path, a Writer
// it declares (as etcd's lessor needs a RangeDeleter): Grant checks the
// quota (a record is refused under NOSPACE) and grants in one write;
// Revoke deletes the lease's keys and its record in one write, so the
// deletes share one revision and a watcher sees them together, after
// asking an optional check (the API's authorization) about the keys
// inside that write; if anything in the write fails, the store undoes
// the deletes and the lease is untouched. The Lessor is the memory the
// Manager and the store share; the Manager is what a backend serves.
//
// # Expiry
//
// Leases sit in a min-heap ordered by expiry. Every CheckInterval (500 ms)
// the Lessor's expiry loop takes the expired ones off the top, at most
// RevokeRate per second (1000), and reports them on Expired. The
// Manager's loop revokes each in a write of its own, but first checks in
// that write that the lease is still expired, since a client may have
// revoked it and granted its ID again since the report. It submits a
// report's revokes together, so the store commits them in few fsyncs: a
// mass expiry reaches the store's write queue in slices and ordinary
// writes keep flowing between them. A reported lease that is still
// present RetryInterval (3 s) later is reported again. An expired lease
// cannot be kept alive, but until it is revoked it still exists: Lookup
// finds it and keys can still be put with it (they are deleted with it).
//
// # Restart
//
// Expiries are not persisted and keep-alives are not written at all.
// After a restart, Restore gives every lease its full granted TTL again,
// counted from the restart, as etcd does: a lease outlives its
// pre-restart expiry by up to its TTL plus the downtime, but no lease
// expires early because the server was down. So that leases granted over
// a long time do not all expire together after a restart, Restore spreads
// them: taken shortest TTL first, each expires at least 1s/(¾ RevokeRate)
// after the one before, delayed beyond its TTL only as far as that needs,
// so no second holds more expiries than three quarters of the rate the
// loop reports at. Restore also hands each lease the keys mvcc.Open
// attached to it while rebuilding its index.
//
// # Time
//
// Every expiry is computed from Config.Now; the loop's ticker runs on the
// runtime's timers, so tests drive both with testing/synctest.
package lease
