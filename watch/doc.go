// Package watch is httpkv's watchable store: it wraps an mvcc.Store,
// performs every write through it, and delivers each durable revision's
// events to the watchers that match them, in revision order, exactly
// once, whole revisions at a time.
//
// A watcher is synced (caught up: events come from the write path, found
// through a map of single keys and an interval tree of ranges), unsynced
// (behind: the sync loop replays it from history), or a victim (its queue
// was full when the write path offered a revision: the victim loop
// retries). What the store holds for each watcher is bounded, in events
// and in bytes (1 MiB by default): its queue, what its reader took and
// has not released (an HTTP stream still writing it to a slow client),
// and a victim's revision. Past the bound the watcher holds nothing more
// and is replayed from history once its reader catches up, so a reader
// stalled across a compaction ends with a compacted response. A watcher that needs history below the compact revision ends with a
// compacted response, whenever the compaction happens.
package watch
