package watch

import (
	"context"
	"sync"

	"github.com/httpkv/httpkv/kv"
)

// Stream is a reader's handle on one watcher.
type Stream struct {
	s     *Store
	w     *watcher
	start int64
	rev   int64
	once  sync.Once
	ended bool
	// lent is the queue Next took last, given back to the store's pool
	// on Release: the reader is done with it then. (Next again does not
	// give it back: a reader calling Recv may still hold what it
	// returned.)
	lent    []kv.WatchResponse
	lentBox *[]kv.WatchResponse
}

// StartRevision is the first revision the stream reports.
func (st *Stream) StartRevision() int64 { return st.start }

// Revision is the store's revision as watchers saw it when the watch
// began: every revision up to it had been delivered to the synced
// watchers, none after it. For a watch from now it is exactly
// StartRevision - 1, the revision the stream is consistent with; the
// header of the watch's first message. (The store's own revision may be
// ahead of it: a revision is durable before it is delivered.)
func (st *Stream) Revision() int64 { return st.rev }

// Ready is signalled when responses may be waiting; call Next to take
// them. It is nil for a watch started with a Notify function.
func (st *Stream) Ready() <-chan struct{} { return st.w.ready }

// Next returns every response queued so far, without waiting; after the
// final one (compacted or canceled) it returns nil. Events carry their
// previous versions when the watch asked for them: if one of those is no
// longer in the history, the watch ends with a compacted response instead.
//
// What Next returns counts against the watcher's byte bound until the
// reader calls Release, or Next again: a reader that writes responses out
// (to a slow client) calls Release once it has, so that the store does
// not queue more for it meanwhile than the bound allows.
func (st *Stream) Next() []kv.WatchResponse {
	if st.ended {
		return nil
	}
	released := st.release()
	rs, box, stalled := st.w.take()
	st.lent, st.lentBox = rs, box
	if len(rs) == 0 {
		if released || stalled {
			st.s.kickSync() // room was made, or the reader is back
		}
		return nil
	}
	n := 0
	for _, r := range rs {
		n += len(r.Events)
	}
	st.s.pendingEvents.Add(-int64(n))
	st.s.eventsSent.Add(int64(n))
	if st.w.prevKV {
		rs = st.s.fillPrevKVs(st.w, rs)
	}
	for _, r := range rs {
		if r.CompactRevision != 0 || r.Canceled {
			st.ended = true
			st.Close()
		}
	}
	// Taking made room: catching up may go on.
	st.s.kickSync()
	return rs
}

// Release tells the store the reader is done with what Next returned: it
// no longer counts against the watcher's bound, so catching up may go on,
// and the slice Next returned is reused: the reader must not touch it,
// nor anything it got by slicing it, after Release. (The events
// the responses hold stay the reader's.)
func (st *Stream) Release() {
	if st.lent != nil {
		putQueue(st.lent, st.lentBox)
		st.lent, st.lentBox = nil, nil
	}
	if st.release() {
		st.s.kickSync()
	}
}

func (st *Stream) release() bool { return st.w.release(st.s.unhold) }

// Recv waits for responses and returns them; it returns ctx's error when
// ctx is done first, and nil responses after the final one. It needs a
// watch started without a Notify function.
func (st *Stream) Recv(ctx context.Context) ([]kv.WatchResponse, error) {
	for !st.ended {
		if rs := st.Next(); len(rs) > 0 {
			return rs, nil
		}
		select {
		case <-st.w.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return nil, nil
}

// RequestProgress asks for a progress response. It is queued after every
// event up to its revision, never ahead of one: a watcher still catching
// up gets it once it has caught up.
func (st *Stream) RequestProgress() { st.s.requestProgress(st.w) }

// Close cancels the watcher and removes it from the store at once.
// Responses not yet taken are dropped: Next returns the final one only. It
// is safe to call more than once.
func (st *Stream) Close() {
	st.once.Do(func() {
		st.s.cancel(st.w)
		n, cs := st.w.drop()
		st.s.pendingEvents.Add(-int64(n))
		for _, c := range cs {
			st.s.unhold(c)
		}
	})
}
