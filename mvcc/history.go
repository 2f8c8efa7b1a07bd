package mvcc

import (
	"bytes"
	"fmt"
	"math"

	"github.com/httpkv/httpkv/keyrange"
)

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
	// historyEventOverhead is what an event is counted for beyond its key
	// and value bytes: its numbers and field names.
	historyEventOverhead = 64
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
	// it, when there was one and it is still held (see HistoryEvent).
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

// HistoryEvent is an event of a history page.
type HistoryEvent struct {
	Event
	// PrevKV, with HistoryRequest.PrevKV, is the key at the revision
	// before the event, as a watch with prev_kv gives it. It is nil when
	// the key did not exist then, and also when that revision is below
	// the compact revision: an event at the compact revision itself has
	// lost its previous version to the compaction (etcd's watch omits it
	// the same way).
	PrevKV *KeyValue
}

// HistoryPage is one page of history.
type HistoryPage struct {
	// Events in revision order (the reverse with Descend).
	Events []HistoryEvent
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

// maxSub is the position after every write of a revision: descending
// reads start a revision there.
const maxSub = math.MaxInt64

// HistoryPage reads the store's history: see ReadTxn.HistoryPage.
func (s *Store) HistoryPage(q HistoryRequest) (HistoryPage, error) {
	r, err := s.Read()
	if err != nil {
		return HistoryPage{}, err
	}
	defer r.End()
	return r.HistoryPage(q)
}

// HistoryPage reads one page of the events of q's range in q's window.
//
// It fails with ErrFutureRev when the window ends above the current
// revision (or starts above it), with ErrInvalidArgument when it starts
// after it ends or q.Resume lies outside it, and with a *CompactedError
// when the window starts below the compact revision or, for a following
// page, when the compaction has passed q.Resume: that history is gone.
// A window starting exactly at the compact revision is readable, that
// revision's events (tombstones included) with it.
//
// A descending read whose window the compaction has overtaken returns
// what lies at or above the compact revision, then More with a Next below
// it, so the page after it fails: it never silently stops short.
//
// The page costs the records it reads, at most q.MaxScan, and the events
// it returns; the bytes it returns are copies.
func (r *ReadTxn) HistoryPage(q HistoryRequest) (HistoryPage, error) {
	if err := q.validate(); err != nil {
		return HistoryPage{}, err
	}
	cur, compact := r.v.rev, r.s.compactRev
	page := HistoryPage{
		StartRevision:   q.StartRevision,
		EndRevision:     q.EndRevision,
		CompactRevision: compact,
		Revision:        cur,
	}
	if page.StartRevision == 0 {
		page.StartRevision = max(compact, 1)
	}
	if page.EndRevision == 0 {
		page.EndRevision = cur
	}
	start, end := page.StartRevision, page.EndRevision
	switch {
	case end > cur:
		return HistoryPage{}, futureRev("end revision", end, cur)
	case start > cur:
		return HistoryPage{}, futureRev("start revision", start, cur)
	case start > end:
		return HistoryPage{}, invalidf("start revision %d after end revision %d", start, end)
	}
	pos := q.Resume
	if pos == (Revision{}) {
		if start < compact {
			return HistoryPage{}, &CompactedError{CompactRevision: compact}
		}
		pos = Revision{Main: start}
		if q.Descend {
			pos = Revision{Main: end, Sub: maxSub}
		}
	} else if pos.Main < start || pos.Main > end {
		return HistoryPage{}, invalidf("resume position %d outside the window [%d, %d]", pos.Main, start, end)
	}
	if pos.Main < compact {
		return HistoryPage{}, &CompactedError{CompactRevision: compact}
	}
	sc := historyScan{r: r, q: &q, compact: compact, lo: start, hi: end}
	if q.Descend {
		sc.lo = max(start, compact)
	}
	run := sc.scan
	if (keyrange.Range{Key: q.Key, End: q.End}).IsSingle() {
		run = sc.walkKey // a single key: its revisions are in the index
	}
	if err := run(pos, &page); err != nil {
		return HistoryPage{}, err
	}
	if !page.More && sc.lo > start {
		// A descending read reached the compact revision, which has
		// overtaken the window's low end: the rest of the window is
		// gone, and the next page says so.
		page.More, page.Next = true, Revision{Main: sc.lo - 1, Sub: maxSub}
	}
	return page, nil
}

// historyScan is one page's walk over the history records.
type historyScan struct {
	r       *ReadTxn
	q       *HistoryRequest
	compact int64
	lo, hi  int64 // the main revisions the walk may read, inclusive
}

// scan reads the history records from pos in the request's direction and
// fills the page with those of the range.
func (sc *historyScan) scan(pos Revision, page *HistoryPage) error {
	q := sc.q
	r := keyrange.Range{Key: q.Key, End: q.End}
	c := sc.r.tx.Bucket(keyBucket).Cursor()
	step := c.Next
	k, v := c.Seek(revBytes(pos, false))
	if q.Descend {
		step = c.Prev
		if k == nil {
			k, v = c.Last()
		} else if rev, _, err := parseRevBytes(k); err != nil {
			return err
		} else if rev.GreaterThan(pos) {
			k, v = c.Prev()
		}
	}
	bytesLeft := q.MaxBytes
	for scanned := 0; k != nil; k, v = step() {
		rev, tomb, err := parseRevBytes(k)
		if err != nil {
			return err
		}
		if rev.Main > sc.hi || rev.Main < sc.lo {
			return nil
		}
		if scanned == q.MaxScan {
			page.More, page.Next = true, rev
			return nil
		}
		scanned++
		hdr, _, err := decodeHeader(v)
		if err != nil {
			return err
		}
		if tomb && q.NoDelete || !tomb && q.NoPut || !r.Contains(hdr.key) {
			continue
		}
		if len(page.Events) == q.Limit {
			// Stop at the next event, so More says there is one.
			page.More, page.Next = true, rev
			return nil
		}
		if ok, err := sc.add(page, rev, tomb, v, hdr.key, &bytesLeft); !ok {
			return err
		}
	}
	return nil
}

// walkKey fills the page of a single key from the key's revisions in the
// index, reading only the records of its events: a page costs what it
// returns, however long the history of other keys around it.
func (sc *historyScan) walkKey(pos Revision, page *HistoryPage) error {
	q := sc.q
	type hit struct {
		rev  Revision
		tomb bool
	}
	var hits []hit
	var more bool
	var next Revision
	visited := 0
	sc.r.s.index.walkKey(q.Key, pos, q.Descend, func(rev Revision, tomb bool) bool {
		switch {
		case rev.Main > sc.hi || rev.Main < sc.lo:
			return false
		case visited == q.MaxScan:
			more, next = true, rev
			return false
		}
		visited++
		if tomb && q.NoDelete || !tomb && q.NoPut {
			return true
		}
		if len(hits) == q.Limit {
			more, next = true, rev
			return false
		}
		hits = append(hits, hit{rev, tomb})
		return true
	})
	keys := sc.r.tx.Bucket(keyBucket)
	bytesLeft := q.MaxBytes
	for _, h := range hits {
		record := keys.Get(revBytes(h.rev, h.tomb))
		if record == nil {
			return fmt.Errorf("%w: revision %v of %q missing from history", ErrCorrupt, h.rev, q.Key)
		}
		if ok, err := sc.add(page, h.rev, h.tomb, record, q.Key, &bytesLeft); !ok {
			return err
		}
	}
	page.More, page.Next = more, next
	return nil
}

// add appends the event of the record at rev to the page unless the
// page's bytes cannot take it, and reports whether to go on: when not,
// the page ends there with More, or the read failed with err.
func (sc *historyScan) add(page *HistoryPage, rev Revision, tomb bool, record, key []byte, bytesLeft *int) (bool, error) {
	ev, size, err := sc.event(rev, tomb, record, key)
	if err != nil {
		return false, err
	}
	if len(page.Events) > 0 && size > *bytesLeft {
		page.More, page.Next = true, rev
		return false, nil
	}
	*bytesLeft -= size
	page.Events = append(page.Events, ev)
	return true, nil
}

// event makes the event of the record at rev, with copies of its bytes,
// and returns what it counts against the page's bytes.
func (sc *historyScan) event(rev Revision, tomb bool, record, key []byte) (HistoryEvent, int, error) {
	var ev HistoryEvent
	if tomb {
		ev.Type = EventDelete
		ev.KV = KeyValue{Key: bytes.Clone(key), ModRevision: rev.Main}
	} else {
		kv, err := decodeKeyValue(record)
		if err != nil {
			return HistoryEvent{}, 0, err
		}
		ev.KV = kv
	}
	size := historyEventOverhead + len(ev.KV.Key) + len(ev.KV.Value)
	// Below the compact revision the index may still hold a version the
	// compaction is deleting from the file right now: never look there.
	if !sc.q.PrevKV || rev.Main-1 < max(sc.compact, 1) {
		return ev, size, nil
	}
	kr, err := sc.r.s.index.get(key, rev.Main-1)
	if err != nil {
		return ev, size, nil // the key did not exist then
	}
	prev, err := sc.r.v.get(kr)
	if err != nil {
		return HistoryEvent{}, 0, err
	}
	ev.PrevKV = &prev
	return ev, size + historyEventOverhead + len(prev.Key) + len(prev.Value), nil
}

func futureRev(what string, rev, cur int64) error {
	return fmt.Errorf("%w: %s %d, current %d", ErrFutureRev, what, rev, cur)
}

// validate checks q and fills in its defaults.
func (q *HistoryRequest) validate() error {
	switch {
	case len(q.Key) == 0:
		return invalidf("empty key")
	case q.StartRevision < 0 || q.EndRevision < 0:
		return invalidf("negative revision")
	case q.Resume.Main < 0 || q.Resume.Sub < 0:
		return invalidf("negative resume position")
	case q.Limit < 0 || q.MaxBytes < 0 || q.MaxScan < 0:
		return invalidf("negative limit")
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
