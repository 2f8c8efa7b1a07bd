package concurrency

import "context"

// Backend is what locks and elections need of a store: etcd's primitives,
// small enough that the embedded store and an etcd cluster can both stand
// behind it. Every method may be called from many goroutines at once.
type Backend interface {
	// Txn runs t atomically: its Then ops if every compare of If holds,
	// its Else ops otherwise.
	Txn(ctx context.Context, t Txn) (TxnResult, error)
	// Range reads one key or a range of keys. A read below the compact
	// revision fails with ErrCompacted (wrapping the backend's own error).
	Range(ctx context.Context, r RangeRequest) (RangeResult, error)
	// Watch starts a watch; the caller closes it.
	Watch(ctx context.Context, r WatchRequest) (Watcher, error)
	// LeaseExists reports whether a lease is alive (granted, and neither
	// revoked nor expired).
	LeaseExists(ctx context.Context, id int64) (bool, error)
}

// KeyValue is one version of a key, as the store holds it.
type KeyValue struct {
	Key, Value     []byte
	CreateRevision int64
	ModRevision    int64
	Version        int64
	Lease          int64
}

// Compare is a condition on one key: that its create revision, or its
// lease, equals Value. A key that does not exist has create revision 0
// and lease 0.
type Compare struct {
	Key    []byte
	Target CompareTarget
	Value  int64
}

// CompareTarget says what a Compare looks at.
type CompareTarget int

// The targets a Compare can have.
const (
	CompareCreate CompareTarget = iota
	CompareLease
)

// OpType says what an Op does.
type OpType int

// The ops of a txn.
const (
	OpGet OpType = iota
	OpPut
	OpDelete
)

// Op is one step of a txn on one key: a get, a put of Value attached to
// Lease, or a delete.
type Op struct {
	Type  OpType
	Key   []byte
	Value []byte
	Lease int64
}

// Txn is a compare-then-write on keys, as etcd's.
type Txn struct {
	If         []Compare
	Then, Else []Op
	// CheckLeases, if set, is called inside the txn's write, before its
	// ops, with the keys then attached to the leases its puts name (in
	// either branch; a lease that does not exist adds none). Its error
	// aborts the txn, which writes nothing. It lets the caller refuse a
	// put that would tie a key to a lease whose keys it may not write, as
	// etcd's auth does, with no key attached meanwhile escaping the check.
	CheckLeases func(keys [][]byte) error
}

// TxnResult is what a Txn did.
type TxnResult struct {
	Succeeded bool
	// Revision is the revision of the txn's writes, or the store's current
	// revision when it wrote nothing.
	Revision int64
	// Gets holds, for each OpGet of the branch that ran and in its order,
	// the key as it was, or nil when it did not exist.
	Gets []*KeyValue
}

// SortOrder orders a Range by create revision.
type SortOrder int

// The orders of a Range.
const (
	OldestFirst SortOrder = iota
	NewestFirst
)

// RangeRequest reads Key alone (End nil), or the keys of [Key, End),
// sorted by create revision.
type RangeRequest struct {
	Key, End []byte
	// Revision reads the store as it was at that revision; 0 reads it now.
	Revision int64
	Order    SortOrder
	// Limit bounds how many keys come back; 0 means no bound.
	Limit int64
	// MaxCreateRevision, when not 0, leaves out the keys created after it.
	MaxCreateRevision int64
}

// RangeResult is what a Range found.
type RangeResult struct {
	KVs []KeyValue
	// Revision is the store's revision when the range was served: for a
	// read of the present, the revision it saw.
	Revision int64
}

// EventType tells a put from a delete.
type EventType int

// The types of event.
const (
	EventPut EventType = iota
	EventDelete
)

// Event is one change of a key. A delete's KV holds only the key and the
// delete's revision, in ModRevision.
type Event struct {
	Type EventType
	KV   KeyValue
}

// WatchRequest watches Key alone (End nil), or the keys of [Key, End),
// from StartRevision (which must be at least 1) on.
type WatchRequest struct {
	Key, End      []byte
	StartRevision int64
}

// Watcher delivers the events of a watch in revision order, whole
// revisions at a time, without blocking its reader: Ready is signalled
// when Next may have something.
type Watcher interface {
	// Ready is signalled when events, or the end of the watch, may be
	// waiting. The channel stays the same for the watcher's life.
	Ready() <-chan struct{}
	// Next returns the events delivered since the last call, possibly
	// none. Once the watch has ended it returns an error: ErrCompacted
	// (wrapping the backend's own error) when the history it needed was
	// compacted, or ErrWatchEnded (wrapped with the reason) when the store
	// ended it.
	Next() ([]Event, error)
	// Close ends the watch. It is safe to call more than once.
	Close()
}
