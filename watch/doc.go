// Package watch is httpkv's watchable store: it wraps an mvcc.Store,
// performs every write through it, and delivers each durable revision's
// events to the watchers that match them, in revision order, exactly
// once, whole revisions at a time.
//
// A watcher is synced (caught up: events come from the write path, found
// through a map of single keys and an interval tree of ranges), unsynced
// (behind: the sync loop replays it from history), or a victim (its queue
// was full when the write path offered a revision: the victim loop
// retries). Each watcher's queue is bounded; past it, the watcher holds
// nothing in memory and is replayed from history once its reader catches
// up. A watcher that needs history below the compact revision ends with a
// compacted response, whenever the compaction happens.
package watch
