// Package watch is httpkv's watch scheduler: it delivers each published
// revision's events to the watchers that match them, in revision order,
// exactly once, whole revisions at a time.
//
// It knows nothing of where revisions come from. They are published to
// it in order (Store.Publish): by the embedded store's commit point, of
// which it is an observer (mvcc.Observe), or by a gateway's upstream
// watch of an etcd cluster. Watchers that are behind are caught up from a
// History it declares: the events of a span of revisions and the compact
// revision below which they are gone, and the previous versions of keys.
// The embedded store's mvcc.Store is one; a gateway's window of recent
// revisions is another. Revisions need not be contiguous, and one
// published without events only moves the scheduler's revision on.
//
// A watcher is synced (caught up: events come as revisions are
// published, found through a map of single keys and an interval tree of
// ranges), unsynced (behind: the sync loop replays it from the History),
// or a victim (its queue was full when a revision was published: the
// victim loop retries). What the store holds for each watcher is
// bounded, in events and in bytes (1 MiB by default): its queue, what its
// reader took and has not released (an HTTP stream still writing it to a
// slow client), and a victim's revision. Past the bound the watcher holds
// nothing more and is replayed from history once its reader catches up,
// so a reader stalled across a compaction ends with a compacted response.
// What the store holds for all watchers together is bounded too
// (MaxPendingBytes), what several hold together counted once: past it no
// watcher is given more, and what is queued for readers that do not take
// it is given back (see memory.go).
// A watcher that needs history below the compact revision ends with a
// compacted response, whenever the compaction happens.
package watch
