package mvcc

import (
	"bytes"
	"fmt"
	"math"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
)

const (
	// historyEventOverhead is what an event is counted for beyond its key
	// and value bytes: its numbers and field names.
	historyEventOverhead = 64
)

// maxSub is the position after every write of a revision: descending
// reads start a revision there.
const maxSub = math.MaxInt64

// HistoryPage reads the store's history: see ReadTxn.HistoryPage.
func (s *Store) HistoryPage(q kv.HistoryRequest) (kv.HistoryPage, error) {
	r, err := s.Read()
	if err != nil {
		return kv.HistoryPage{}, err
	}
	defer r.End()
	return r.HistoryPage(q)
}

// HistoryPage reads one page of the events of q's range in q's window.
//
// It fails with kv.ErrFutureRevision when the window ends above the current
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
func (r *ReadTxn) HistoryPage(q kv.HistoryRequest) (kv.HistoryPage, error) {
	if err := q.Validate(); err != nil {
		return kv.HistoryPage{}, err
	}
	cur, compact := r.v.rev, r.s.compactRev
	page := kv.HistoryPage{
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
		return kv.HistoryPage{}, kv.FutureRevision("end revision", end, cur)
	case start > cur:
		return kv.HistoryPage{}, kv.FutureRevision("start revision", start, cur)
	case start > end:
		return kv.HistoryPage{}, invalidf("start revision %d after end revision %d", start, end)
	}
	pos := q.Resume
	if pos == (kv.Revision{}) {
		if start < compact {
			return kv.HistoryPage{}, &kv.CompactedError{CompactRevision: compact}
		}
		pos = kv.Revision{Main: start}
		if q.Descend {
			pos = kv.Revision{Main: end, Sub: maxSub}
		}
	} else if pos.Main < start || pos.Main > end {
		return kv.HistoryPage{}, invalidf("resume position %d outside the window [%d, %d]", pos.Main, start, end)
	}
	if pos.Main < compact {
		return kv.HistoryPage{}, &kv.CompactedError{CompactRevision: compact}
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
		return kv.HistoryPage{}, err
	}
	if !page.More && sc.lo > start {
		// A descending read reached the compact revision, which has
		// overtaken the window's low end: the rest of the window is
		// gone, and the next page says so.
		page.More, page.Next = true, kv.Revision{Main: sc.lo - 1, Sub: maxSub}
	}
	return page, nil
}

// historyScan is one page's walk over the history records.
type historyScan struct {
	r       *ReadTxn
	q       *kv.HistoryRequest
	compact int64
	lo, hi  int64 // the main revisions the walk may read, inclusive
}

// scan reads the history records from pos in the request's direction and
// fills the page with those of the range.
func (sc *historyScan) scan(pos kv.Revision, page *kv.HistoryPage) error {
	q := sc.q
	r := keyrange.Range{Key: q.Key, End: q.End}
	c := sc.r.v.keys.Cursor()
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
func (sc *historyScan) walkKey(pos kv.Revision, page *kv.HistoryPage) error {
	q := sc.q
	type hit struct {
		rev  kv.Revision
		tomb bool
	}
	var hits []hit
	var more bool
	var next kv.Revision
	visited := 0
	sc.r.s.index.walkKey(q.Key, pos, q.Descend, func(rev kv.Revision, tomb bool) bool {
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
	keys := sc.r.v.keys
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
func (sc *historyScan) add(page *kv.HistoryPage, rev kv.Revision, tomb bool, record, key []byte, bytesLeft *int) (bool, error) {
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
func (sc *historyScan) event(rev kv.Revision, tomb bool, record, key []byte) (kv.Event, int, error) {
	var ev kv.Event
	if tomb {
		ev.Type = kv.EventDelete
		ev.KV = kv.KeyValue{Key: bytes.Clone(key), ModRevision: rev.Main}
	} else {
		rec, err := decodeKeyValue(record)
		if err != nil {
			return kv.Event{}, 0, err
		}
		ev.KV = rec
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
		return kv.Event{}, 0, err
	}
	ev.PrevKV = &prev
	return ev, size + historyEventOverhead + len(prev.Key) + len(prev.Value), nil
}
