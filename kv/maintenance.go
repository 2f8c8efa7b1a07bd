package kv

import "io"

// Alarm names an alarm a backend can raise.
type Alarm string

// AlarmNoSpace is raised when a write would take the backend past its
// quota. While it is active, writes that add data (puts, txns with puts,
// lease grants) fail with ErrNoSpace; reads, deletes (txns of deletes
// too) and compaction work. It stays until disarmed, even across
// restarts, as in etcd.
const AlarmNoSpace Alarm = "NOSPACE"

// WatcherStats count a backend's watchers by group (see package watch)
// and what it holds for them.
type WatcherStats struct {
	Synced, Unsynced, Victims int
	// PendingEvents are events queued for watchers and not yet read.
	PendingEvents int64
	// PendingBytes is what the backend holds for watchers, as counted
	// against each watcher's bound in bytes.
	PendingBytes int64
	// EventsSent counts the events watchers have read since start.
	EventsSent int64
}

// Stats are a backend's figures that cost little to gather, for metrics.
type Stats struct {
	// Revision is the newest revision the backend knows committed.
	Revision        int64
	CompactRevision int64
	// DBSize is the backend's size in bytes; DBSizeInUse leaves out its
	// free pages.
	DBSize      int64
	DBSizeInUse int64
	// Leases counts the leases granted and not yet revoked.
	Leases   int
	Alarms   []Alarm
	Watchers WatcherStats
	// ReadCache is nil for a backend without one.
	ReadCache *ReadCacheStats
}

// ReadCacheStats are the figures of a gateway's read cache: what it
// holds, and the reads it answered.
type ReadCacheStats struct {
	Keys  int
	Bytes int64
	// Reads counts the reads the cache answered since start; Checks the
	// reads of etcd's revision they took (one for each batch of reads).
	Reads, Checks int64
}

// Status is what GET /v1/status reports: the figures of Stats and the
// number of keys, which costs a walk of the keys to count.
type Status struct {
	Stats
	Keys int64
}

// Snapshot is a backend's consistent point-in-time copy, open until
// Close: a stream of Size bytes that WriteTo writes, holding the state at
// Revision. Both backends stream what etcd's snapshots are: the bbolt
// file, then the SHA-256 of those bytes as its last 32 bytes. A backend
// makes one without holding up its writers.
type Snapshot interface {
	Revision() int64
	Size() int64
	WriteTo(w io.Writer) (int64, error)
	Close() error
}
