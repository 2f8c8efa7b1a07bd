package httpapi

import (
	"context"

	"github.com/httpkv/httpkv/kv"
)

// Backend is everything the API needs of a store, in package kv's terms:
// the embedded store (backend/embedded) is one, a gateway over an etcd
// cluster is another. It is declared here, where it is consumed, and
// composed of small interfaces, so that a handler test can fake it.
// Every method is safe for concurrent use; ctx is the request's.
type Backend interface {
	KV
	Bulk
	Watcher
	Leases
	Maintenance
	Monitor
}

// KV reads and writes keys.
type KV interface {
	// Range reads one page of a range: from r.From when set, with Count
	// the count of the whole range.
	Range(ctx context.Context, r kv.RangeRequest) (kv.RangeResult, error)
	// ViewRange is Range handing the result to fn before the read ends:
	// its keys and values may alias the store's pages, and are valid
	// during the call only. A list encodes its answer there, without
	// copies of the keys and values to make and collect.
	ViewRange(ctx context.Context, r kv.RangeRequest, fn func(*kv.RangeResult) error) error
	// Put writes a key. guard, if not nil, is asked inside the write
	// about the keys attached to the lease the put names.
	Put(ctx context.Context, r kv.PutRequest, guard kv.LeaseGuard) (kv.PutResult, error)
	// Delete deletes a key or a range at one revision.
	Delete(ctx context.Context, r kv.DeleteRequest) (kv.DeleteResult, error)
	// Txn runs a txn. guard, if not nil, is asked inside its write about
	// the keys attached to every lease its puts name (kv.PutLeases).
	Txn(ctx context.Context, r kv.TxnRequest, guard kv.LeaseGuard) (kv.TxnResult, error)
	// History reads one page of what happened to a range (API.md
	// "History").
	History(ctx context.Context, r kv.HistoryRequest) (kv.HistoryPage, error)
}

// Bulk reads and writes whole ranges at one revision, however large:
// export, import, restore.
type Bulk interface {
	// Each calls fn with every key of [key, end) at rev (0: the current
	// revision), in key order, holding a page of the range at a time;
	// it returns the revision it read at. The KeyValue is valid during
	// the call only.
	Each(ctx context.Context, key, end []byte, rev int64, fn func(*kv.KeyValue) error) (int64, error)
	// Rewrite makes the range hold given content at one new revision: an
	// import's, or its own at a past revision (a restore).
	Rewrite(ctx context.Context, r kv.RewriteRequest) (kv.RewriteResult, error)
}

// Watcher starts watches. The stream lives until it ends or is closed,
// not until ctx is done.
type Watcher interface {
	Watch(ctx context.Context, r kv.WatchRequest) (kv.WatchStream, error)
}

// Leases grants, renews, reads and revokes leases.
type Leases interface {
	// Grant creates a lease of ttl seconds; id 0 lets the backend choose.
	Grant(ctx context.Context, id, ttl int64) (kv.Lease, error)
	// Revoke deletes the lease's keys in one revision and forgets it; it
	// returns the revision after. guard, if not nil, is asked inside that
	// write with the keys about to go: its error revokes nothing.
	Revoke(ctx context.Context, id int64, guard kv.LeaseGuard) (revision int64, err error)
	// KeepAlive renews a lease to its full TTL and returns that TTL.
	KeepAlive(ctx context.Context, id int64) (ttl int64, err error)
	// TimeToLive reports a lease, with its keys if asked.
	TimeToLive(ctx context.Context, id int64, keys bool) (kv.LeaseStatus, error)
	// LeaseKeys reports a lease with its keys, each charged to limits as
	// it is copied: an answer never holds more than they allow.
	LeaseKeys(ctx context.Context, id int64, limits *kv.ReadLimits) (kv.LeaseStatus, error)
	// Leases returns the IDs of at most limit leases above after, in
	// ascending order, and whether more follow.
	Leases(ctx context.Context, after int64, limit int) (ids []int64, more bool, err error)
}

// Maintenance is what an operator does to a backend.
type Maintenance interface {
	// Compact discards the history below rev; with physical it returns
	// once the space is reclaimed (or ctx is done).
	Compact(ctx context.Context, rev int64, physical bool) error
	// Defrag gives the space of free pages back, and returns the new size.
	Defrag(ctx context.Context) (dbSize int64, err error)
	// Alarms returns the active alarms; DisarmAlarms clears them and
	// returns those still active.
	Alarms(ctx context.Context) ([]kv.Alarm, error)
	DisarmAlarms(ctx context.Context) ([]kv.Alarm, error)
	// Snapshot begins a point-in-time copy of the backend.
	Snapshot(ctx context.Context) (kv.Snapshot, error)
}

// Monitor reports on a backend.
type Monitor interface {
	// Rev is the newest revision the backend knows committed: the
	// revision of the headers of answers that read none of their own.
	Rev() int64
	// Failed returns why the backend takes no writes, or nil.
	Failed() error
	// Stats are the figures cheap to gather (metrics); Status adds the
	// count of keys (GET /v1/status).
	Stats() kv.Stats
	Status(ctx context.Context) (kv.Status, error)
	// PageTokenKey is the key that seals page tokens (see page_token.go):
	// backends whose gateways share one key accept each other's tokens.
	PageTokenKey() []byte
}
