package kv

// Defaults and bounds of a history page.
const (
	// DefaultHistoryLimit is the events of a page when the request names
	// no limit.
	DefaultHistoryLimit = 1000
	// DefaultHistoryMaxBytes bounds the key and value bytes of one page
	// (previous versions included), so that one request cannot make the
	// server hold an unbounded answer: a page stops early, with More,
	// before the event that would pass it. A page always holds at least
	// one event if one is left, however large.
	DefaultHistoryMaxBytes = 4 << 20
	// DefaultHistoryMaxScan bounds the history records one page reads, so
	// that a page of a sparse range over a long history costs bounded
	// time and holds back compaction only that long: the page stops early,
	// possibly with no event, with More and the position to go on from.
	DefaultHistoryMaxScan = 100_000
)

// HistoryRequest selects one page of what happened to a key range over a
// window of revisions: the events a watch of the range starting at
// StartRevision would have delivered up to EndRevision.
type HistoryRequest struct {
	// Key and End select the keys, as a keyrange.Range.
	Key, End []byte
	// StartRevision is the window's first revision; 0 means the oldest
	// still held: the compact revision, or 1.
	StartRevision int64
	// EndRevision is the window's last revision, inclusive; 0 means the
	// current one.
	EndRevision int64
	// Descend reads newest first: exactly the reverse of ascending order.
	Descend bool
	// PrevKV gives each event the key's version at the revision before
	// it, when there was one and it is still held: an event at the
	// compact revision has lost it to the compaction (etcd's watch omits
	// it the same way).
	PrevKV bool
	// NoPut and NoDelete leave those events out, as a watch's filters do.
	NoPut, NoDelete bool
	// Resume is the Next of the page before, to read the one after it in
	// the same window; the zero Revision starts at the window's edge.
	Resume Revision
	// Limit bounds the events of the page; 0 means DefaultHistoryLimit.
	Limit int
	// MaxBytes bounds the page's bytes; 0 means DefaultHistoryMaxBytes.
	MaxBytes int
	// MaxScan bounds the records the page reads; 0 means
	// DefaultHistoryMaxScan.
	MaxScan int
}

// HistoryPage is one page of history.
type HistoryPage struct {
	// Events in revision order (the reverse with Descend).
	Events []Event
	// More reports that the window may hold events after this page; read
	// them with Resume set to Next. A page stopped by MaxScan may have
	// More and no event.
	More bool
	Next Revision
	// StartRevision and EndRevision are the window, defaults resolved:
	// the following pages must ask for the same.
	StartRevision, EndRevision int64
	// CompactRevision is the store's compact revision when the page was
	// read.
	CompactRevision int64
	// Revision is the store's current revision when the page was read.
	Revision int64
}

// Validate checks q and fills in its defaults.
func (q *HistoryRequest) Validate() error {
	switch {
	case len(q.Key) == 0:
		return Invalidf("key must not be empty")
	case q.StartRevision < 0 || q.EndRevision < 0:
		return Invalidf("negative revision")
	case q.Resume.Main < 0 || q.Resume.Sub < 0:
		return Invalidf("negative resume position")
	case q.Limit < 0 || q.MaxBytes < 0 || q.MaxScan < 0:
		return Invalidf("negative limit")
	}
	if q.Limit == 0 {
		q.Limit = DefaultHistoryLimit
	}
	if q.MaxBytes == 0 {
		q.MaxBytes = DefaultHistoryMaxBytes
	}
	if q.MaxScan == 0 {
		q.MaxScan = DefaultHistoryMaxScan
	}
	return nil
}
