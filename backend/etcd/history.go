package etcd

import (
	"context"
	"errors"
	"math"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/httpkv/httpkv/kv"
)

// History pages are read from etcd by a watch of the range from the
// page's first revision (replay): etcd's watch is its only read of past
// events. A page's position is the revision of an event and its index
// among the range's events of that revision (which the range and the
// filters, fixed for every page of a read, decide).
//
// A page costs etcd the revisions its watch scans, at most MaxScan of
// them: a page of a sparse range over a long history stops there, possibly
// with no event, with More and where to go on from.

// historyEventOverhead is what an event counts for beyond its bytes, as
// the embedded store counts it.
const historyEventOverhead = 64

// maxSub is the position after every event of a revision.
const maxSub = math.MaxInt64

// descendSpan is the revisions a descending page first reads; it doubles
// while the page is not full.
const descendSpan = 1024

// History reads one page of what happened to a range: see
// kv.HistoryRequest for the window, the order and the bounds.
func (b *Backend) History(ctx context.Context, q kv.HistoryRequest) (kv.HistoryPage, error) {
	if err := q.Validate(); err != nil {
		return kv.HistoryPage{}, err
	}
	// The page's watches wait for etcd: not once it stops serving.
	ctx, stop, err := b.whileServing(ctx)
	if err != nil {
		return kv.HistoryPage{}, err
	}
	defer stop()
	var cur int64
	err = b.call(ctx, func(ctx context.Context) error {
		resp, err := b.kv.Get(ctx, string(q.Key), clientv3.WithRange(string(q.End)), clientv3.WithCountOnly())
		if err != nil {
			return err
		}
		cur = resp.Header.Revision
		b.saw(cur)
		return nil
	})
	if err != nil {
		return kv.HistoryPage{}, err
	}
	hr := historyRead{b: b, q: &q, page: kv.HistoryPage{
		StartRevision: q.StartRevision, EndRevision: q.EndRevision, Revision: cur,
	}}
	if err := hr.window(ctx); err != nil {
		return kv.HistoryPage{}, err
	}
	if q.Descend {
		err = hr.descend(ctx)
	} else {
		err = hr.ascend(ctx)
	}
	if err != nil {
		return kv.HistoryPage{}, err
	}
	hr.page.CompactRevision = b.compact.Load()
	return hr.page, nil
}

// historyRead is one page's read.
type historyRead struct {
	b    *Backend
	q    *kv.HistoryRequest
	page kv.HistoryPage
	pos  kv.Revision
	// bytesLeft is what the page's events may still take.
	bytesLeft int
}

// window resolves the page's window and where it starts, and checks them
// as the embedded store does.
func (hr *historyRead) window(ctx context.Context) error {
	p, q, cur := &hr.page, hr.q, hr.page.Revision
	compact := hr.b.compact.Load()
	if p.StartRevision == 0 {
		// The oldest revision held: etcd's compact revision.
		c, err := hr.b.compactRevision(ctx)
		if err != nil {
			return err
		}
		p.StartRevision = max(c, 1)
		compact = c
	}
	if p.EndRevision == 0 {
		p.EndRevision = cur
	}
	start, end := p.StartRevision, p.EndRevision
	switch {
	case end > cur:
		return kv.FutureRevision("end revision", end, cur)
	case start > cur:
		return kv.FutureRevision("start revision", start, cur)
	case start > end:
		return kv.Invalidf("start revision %d after end revision %d", start, end)
	}
	hr.pos = q.Resume
	if hr.pos == (kv.Revision{}) {
		if q.Descend && q.StartRevision != 0 {
			// A descending read meets the start last: ask now whether it
			// is gone, as an ascending read's first watch would tell.
			c, err := hr.b.compactedBelow(ctx, start)
			if err != nil {
				return err
			}
			compact = c
		}
		if start < compact {
			return &kv.CompactedError{CompactRevision: compact}
		}
		hr.pos = kv.Revision{Main: start}
		if q.Descend {
			hr.pos = kv.Revision{Main: end, Sub: maxSub}
		}
	} else if hr.pos.Main < start || hr.pos.Main > end {
		return kv.Invalidf("resume position %d outside the window [%d, %d]", hr.pos.Main, start, end)
	}
	hr.bytesLeft = q.MaxBytes
	return nil
}

// watchOptions are the filters of a page's watch.
func (hr *historyRead) watchOptions() replayOptions {
	return replayOptions{prevKV: hr.q.PrevKV, noPut: hr.q.NoPut, noDelete: hr.q.NoDelete}
}

// positioned is an event with its position.
type positioned struct {
	ev  kv.Event
	pos kv.Revision
}

// read calls fn with the range's events of revisions from to to, each
// with its position, until fn returns false.
func (hr *historyRead) read(ctx context.Context, from, to int64, fn func(positioned) bool) error {
	var rev, idx int64
	return hr.b.historyReplay(ctx, hr.b.opts.Namespace+keysPrefix, string(hr.q.Key), string(hr.q.End), from, to, hr.watchOptions(),
		func(e *clientv3.Event) bool {
			if e.Kv.ModRevision != rev {
				rev, idx = e.Kv.ModRevision, 0
			}
			p := positioned{ev: toEvent(e), pos: kv.Revision{Main: rev, Sub: idx}}
			idx++
			return fn(p)
		})
}

// add appends ev to the page unless the page is full (Limit, or the bytes
// of a page that holds one event at least): the page then ends with More
// at ev. It reports whether ev was added.
func (hr *historyRead) add(p positioned) bool {
	size := historyEventOverhead + len(p.ev.KV.Key) + len(p.ev.KV.Value)
	if prev := p.ev.PrevKV; prev != nil {
		size += historyEventOverhead + len(prev.Key) + len(prev.Value)
	}
	page := &hr.page
	if len(page.Events) == hr.q.Limit || len(page.Events) > 0 && size > hr.bytesLeft {
		page.More, page.Next = true, p.pos
		return false
	}
	hr.bytesLeft -= size
	page.Events = append(page.Events, p.ev)
	return true
}

// ascend reads the page from hr.pos up, MaxScan revisions at most.
func (hr *historyRead) ascend(ctx context.Context) error {
	end := hr.page.EndRevision
	to := end
	if scanEnd := hr.pos.Main + int64(hr.q.MaxScan) - 1; scanEnd < to {
		to = scanEnd
	}
	full := false
	err := hr.read(ctx, hr.pos.Main, to, func(p positioned) bool {
		if p.pos.Main == hr.pos.Main && p.pos.Sub < hr.pos.Sub {
			return true // on the page before
		}
		full = !hr.add(p)
		return !full
	})
	if err != nil {
		return err
	}
	if !full && to < end {
		hr.page.More, hr.page.Next = true, kv.Revision{Main: to + 1}
	}
	return nil
}

// descend reads the page from hr.pos down: spans of revisions below it,
// each read up by a watch and keeping its newest events, doubling while
// the page is not full, MaxScan revisions at most. A span that meets the
// compact revision reads what lies at or above it; the page then ends
// with More below it, so that the next page fails with compacted rather
// than stopping short.
func (hr *historyRead) descend(ctx context.Context) error {
	floor := hr.page.StartRevision // the lowest revision left to read
	hi, hiSub := hr.pos.Main, hr.pos.Sub
	want := hr.q.Limit + 1 // one more than a page, to tell More
	var found []positioned // newest first
	span, scanned := int64(descendSpan), int64(0)
	for hi >= floor && len(found) < want {
		if scanned >= int64(hr.q.MaxScan) {
			return hr.emit(found, kv.Revision{Main: hi, Sub: maxSub})
		}
		lo := max(floor, hi-span+1, hi-(int64(hr.q.MaxScan)-scanned)+1)
		var chunk []positioned // oldest first, the newest want kept
		err := hr.read(ctx, lo, hi, func(p positioned) bool {
			if p.pos.Main == hi && p.pos.Sub > hiSub {
				return false // on the page before
			}
			if len(chunk) == want {
				chunk = append(chunk[:0], chunk[1:]...)
			}
			chunk = append(chunk, p)
			return true
		})
		var ce *kv.CompactedError
		if errors.As(err, &ce) {
			if ce.CompactRevision > hi && hr.pos == (kv.Revision{Main: hi, Sub: hiSub}) {
				return err // the page's first revision is gone
			}
			floor = ce.CompactRevision
			continue // read what lies at or above it, if anything
		}
		if err != nil {
			return err
		}
		for i := len(chunk) - 1; i >= 0 && len(found) < want; i-- {
			found = append(found, chunk[i])
		}
		scanned += hi - lo + 1
		hi, hiSub, span = lo-1, maxSub, 2*span
	}
	if len(found) < want && floor > hr.page.StartRevision {
		// The compaction overtook the window: say so on the next page.
		return hr.emit(found, kv.Revision{Main: floor - 1, Sub: maxSub})
	}
	return hr.emit(found, kv.Revision{})
}

// emit fills the page with found, newest first; when the page does not
// take them all, it ends at the first left out, and otherwise at after
// (if not zero).
func (hr *historyRead) emit(found []positioned, after kv.Revision) error {
	for _, p := range found {
		if !hr.add(p) {
			return nil
		}
	}
	if after != (kv.Revision{}) {
		hr.page.More, hr.page.Next = true, after
	}
	return nil
}
