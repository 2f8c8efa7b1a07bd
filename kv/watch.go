package kv

// WatchRequest describes what a watch watches.
type WatchRequest struct {
	// Key and End select the keys, as a keyrange.Range.
	Key, End []byte
	// StartRevision is the first revision to report; 0 means the next one.
	StartRevision int64
	PrevKV        bool // events carry the key's previous version
	NoPut         bool // leave puts out
	NoDelete      bool // leave deletes out
	// ProgressNotify asks for a progress response whenever the watch has
	// been idle for the backend's progress interval.
	ProgressNotify bool
	// Notify, when not nil, is called instead of signalling Ready
	// whenever responses may be waiting (and Ready is then nil): a reader
	// of many watches learns which one is ready without a goroutine or a
	// channel each. It is called with no lock of the backend's held (by
	// the call that published, or by a goroutine of the backend's), so
	// it may call back into the stream; it should return at once, as the
	// notifications of other watches wait for it.
	Notify func()
}

// WatchResponse is what a watch delivers: events, a progress bookmark,
// or the end of the watch.
//
// Once delivered (returned by WatchStream.Next), a response's Events,
// and the events and key-values they hold, are never changed again by
// the backend, nor their memory reused while anything refers to them: a
// slice of them is the identity of what they encode. The scheduler hands
// the watchers that take a revision whole one shared slice of its
// events, and the stream engine encodes each such slice once for all of
// them, keyed by its address (the API's encode-once cache of events
// fields, stream's recentEncoded, and the shared fields of its streams
// of many watchers), which is correct only while this holds. Every backend
// (the embedded store's and etcd's both deliver through package watch)
// and every test fake must keep it; events with previous versions are a
// watcher's own slice, filled before they are delivered.
type WatchResponse struct {
	// Revision: for events, the revision of the last of them; for a
	// progress response, the revision up to which every event has been
	// delivered; for a compacted one, the backend's revision then.
	Revision int64
	// Events are whole revisions in revision order: the events of one
	// revision are never split across responses.
	Events []Event
	// Progress marks a bookmark with no events.
	Progress bool
	// CompactRevision, when set, ends the watch: it needed history below
	// this compact revision.
	CompactRevision int64
	// Canceled ends the watch for CancelReason.
	Canceled     bool
	CancelReason string
}

// WatchStream is a reader's handle on one watch, as both backends serve
// it (the same scheduler stands behind both).
type WatchStream interface {
	// StartRevision is the first revision the stream reports.
	StartRevision() int64
	// Revision is the backend's revision as watchers had seen it when the
	// watch began: for a watch from now, StartRevision - 1.
	Revision() int64
	// Ready is signalled when responses may be waiting; nil for a watch
	// started with a Notify function, which is called instead.
	Ready() <-chan struct{}
	// Next returns every response queued so far, without waiting; after
	// the final one (compacted or canceled) it returns nil. What it
	// returns counts against the watch's memory bound until Release or
	// the next Next.
	Next() []WatchResponse
	// Release says the reader is done with what Next returned: the
	// slice may be reused from then on, so the reader keeps nothing of
	// it but the responses' events.
	Release()
	// Close ends the watch. It is safe to call more than once.
	Close()
}
