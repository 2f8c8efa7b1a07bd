package kv

// KeyValue is one version of a key.
type KeyValue struct {
	Key            []byte
	Value          []byte
	CreateRevision int64 // main revision of the put that created this generation of the key
	ModRevision    int64 // main revision of the write that made this version
	Version        int64 // 1 for the put that created the key, +1 for each put since
	Lease          int64 // lease the key is attached to; 0 for none
}

// EventType tells a put from a delete.
type EventType int

const (
	EventPut EventType = iota
	EventDelete
)

func (t EventType) String() string {
	if t == EventDelete {
		return "delete"
	}
	return "put"
}

// Event is one change made by a write. A delete's KV carries only the key
// and the ModRevision of the delete. PrevKV, where a reader asked for it,
// is the key's version before the change; nil when it did not exist (or
// is no longer held: see the reader's documentation).
type Event struct {
	Type   EventType
	KV     KeyValue
	PrevKV *KeyValue
}

// Changes are the events of one revision, in the order the write made
// them (their sub revisions).
type Changes struct {
	Revision int64
	Events   []Event
}

// Revision identifies one write: Main is the revision of the write
// transaction, Sub the position of the write inside it, as in etcd.
type Revision struct {
	Main int64
	Sub  int64
}

// GreaterThan reports whether r was written after o.
func (r Revision) GreaterThan(o Revision) bool {
	if r.Main != o.Main {
		return r.Main > o.Main
	}
	return r.Sub > o.Sub
}
