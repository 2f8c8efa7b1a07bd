package multi

import (
	"time"

	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/stream"
	"github.com/httpkv/httpkv/wire"
)

// A take of a stream of many watchers: what a ready watcher has queued,
// counted against TotalBufferBytes before it is encoded into pending
// (see flow.go for when a watcher is taken, deferred or
// parked), and the buffers it is encoded into.

// take encodes what w's backend watch has queued into pending, if the
// bound for all streams has room for it; else w is parked, and catches
// up from history once there is room (unpark), as a watcher past its
// stream's own bound does.
func (ms *Stream) take(w *streamWatcher) {
	rs := w.bw.Next()
	plan, ok := ms.planTake(rs)
	if !ok {
		ms.park(w)
		ms.reg.refused.Add(1)
		ms.reg.crowded.Store(true)
		return
	}
	for i := range rs {
		if ms.encodeResponse(w, &rs[i], plan) {
			break
		}
	}
	ms.reg.unreserve(plan.grow)
	plan.done(ms.reg)
	ms.account()
	if w.bw != nil {
		w.bw.Release()
	}
}

// growFor makes pending able to take own bytes more without growing as
// it is encoded, and returns how much more capacity the stream's buffers
// then hold, counted against TotalBufferBytes first (reserve); ok is
// false, and nothing is made, when there is no room for it. Pending
// grows by doubling, as append would, so that a stream taking many small
// takes copies its buffer a few times, not once a take. A new pending
// buffer is counted at its capacity.
func (ms *Stream) growFor(own int) (grow int64, ok bool) {
	var used, capacity int // of the buffer pending will be; counted already
	switch {
	case ms.pending != nil:
		used, capacity = len(ms.pending.out), cap(ms.pending.out)
	case ms.flow.spare != nil:
		capacity = cap(ms.flow.spare.out)
	default:
		// A new buffer: one made for the size of recent takes, or one from
		// the pool, counted at its capacity before it is pending.
		var sb *streamBuffer
		var fresh int
		if ms.flow.hint > stream.MaxPooledBuffer {
			fresh = max(own, ms.pendingCap())
			if !ms.reg.reserve(int64(fresh)) {
				return 0, false
			}
			sb = &streamBuffer{out: make([]byte, 0, fresh)}
		} else {
			sb = getStreamBuffer()
			fresh = max(own, cap(sb.out))
			if !ms.reg.reserve(int64(fresh)) {
				putStreamBuffer(sb)
				return 0, false
			}
			if cap(sb.out) < own {
				sb.out = make([]byte, 0, own)
			}
		}
		ms.pending, ms.flow.since = sb, time.Now()
		return int64(fresh), true
	}
	if used+own <= capacity {
		ms.pendingBuffer()
		return 0, true
	}
	newCap := max(used+own, 2*capacity)
	if !ms.reg.reserve(int64(newCap - capacity)) {
		return 0, false
	}
	sb := ms.pendingBuffer()
	grown := make([]byte, len(sb.out), newCap)
	copy(grown, sb.out)
	sb.out = grown
	return int64(newCap - capacity), true
}

// takePlan is what one take will hold, counted against TotalBufferBytes
// before it is encoded: own, the bytes it will add to pending at most,
// and fields, for each of its messages of events in order, the shared
// field it refers to, or nil when they are copied.
type takePlan struct {
	own    int64
	grow   int64 // what growFor counted for pending, given back once accounted
	fields []*sharedField
	next   int
}

// messageOverhead bounds what a message adds to pending besides its
// events field or its reason: its id, event name, type, watch_id, header
// and compact revision, each number of up to 20 digits.
const messageOverhead = 256

// planTake counts what taking rs will add to the stream's buffers against
// TotalBufferBytes (pending's growth, and the shared fields it refers to
// that no stream held), pins those fields, and makes pending large
// enough. ok is false, and nothing is counted, when there is no room for
// it. The events' encoded sizes are counted exactly: JSON escapes some
// bytes in six, so their raw size says little.
func (ms *Stream) planTake(rs []kv.WatchResponse) (*takePlan, bool) {
	p := &ms.plan
	p.own, p.next = 0, 0
	p.fields = p.fields[:0]
	for i := range rs {
		r := &rs[i]
		if r.CompactRevision != 0 || r.Canceled || r.Progress || len(r.Events) == 0 {
			p.own += messageOverhead + ms.cursorBytes() + 6*int64(len(r.CancelReason))
			continue
		}
		for evs := r.Events; len(evs) > 0; {
			rev, n := stream.RevisionSpan(evs)
			size := len(stream.RecentEvents(rev, evs[:n]))
			if size == 0 {
				size = wire.EventsFieldSize(evs[:n])
			}
			p.own += messageOverhead + ms.cursorBytes()
			var f *sharedField
			if shareable(evs[:n], size) {
				var ok bool
				if f, ok = ms.reg.pinField(evs[:n], size); !ok {
					p.done(ms.reg)
					return nil, false
				}
			} else {
				p.own += int64(size)
			}
			p.fields = append(p.fields, f)
			evs = evs[n:]
		}
	}
	var ok bool
	if p.grow, ok = ms.growFor(int(p.own)); !ok {
		p.done(ms.reg)
		return nil, false
	}
	return p, true
}

// field returns the shared field of the plan's next message of events:
// the stream's pending buffer takes the plan's reference to it.
func (p *takePlan) field() *sharedField {
	f := p.fields[p.next]
	p.fields[p.next] = nil
	p.next++
	return f
}

// done drops the references the plan still holds: those of messages not
// encoded, the watcher having ended before them.
func (p *takePlan) done(g *Registry) {
	for i, f := range p.fields {
		if f != nil {
			g.unpinField(f)
			p.fields[i] = nil
		}
	}
}

// pendingBytes is how much is encoded and not yet taken by a connection,
// the shared fields it refers to included.
func (ms *Stream) pendingBytes() int64 {
	if ms.pending == nil {
		return 0
	}
	return int64(ms.pending.size())
}

// pendingBuffer returns pending, made if need be: the spare buffer of a
// busy stream, or one made for the size of its recent takes, or one from
// the pool.
func (ms *Stream) pendingBuffer() *streamBuffer {
	if ms.pending == nil {
		ms.flow.since = time.Now()
	}
	switch {
	case ms.pending != nil:
	case ms.flow.spare != nil:
		ms.pending, ms.flow.spare = ms.flow.spare, nil
	case ms.flow.hint > stream.MaxPooledBuffer:
		ms.pending = &streamBuffer{out: make([]byte, 0, ms.pendingCap())}
	default:
		ms.pending = getStreamBuffer()
	}
	return ms.pending
}

// pendingCap is what a busy stream's new pending buffer is made for: the
// size of its recent takes and a quarter.
func (ms *Stream) pendingCap() int {
	return min(ms.flow.hint+ms.flow.hint/4, maxKeptBuffer)
}

// recycle takes back a buffer the connection wrote: a busy stream keeps
// a large one for its next writes.
func (ms *Stream) recycle(sb *streamBuffer) {
	ms.reg.unpinRefs(sb)
	ms.mu.Lock()
	defer ms.mu.Unlock()
	ms.flow.writingCap = 0
	defer ms.account()
	if cap(sb.out) > stream.MaxPooledBuffer && cap(sb.out) <= maxKeptBuffer && ms.flow.spare == nil && !ms.gone &&
		ms.reg.buffered.Load() < ms.reg.cfg.TotalBufferBytes {
		sb.out = sb.out[:0]
		ms.flow.spare = sb
		return
	}
	putStreamBuffer(sb)
}

// shed lets go of the buffer a stream kept for its next writes: it has
// been idle for a while.
func (ms *Stream) shed() {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	ms.flow.spare, ms.flow.hint = nil, 0
	ms.account()
}
