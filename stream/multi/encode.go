package multi

import (
	"cmp"
	"strconv"

	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/stream"

	"github.com/httpkv/httpkv/wire"
)

// The messages of a stream of many watchers. They are a single watch's
// (see package stream's Encoder), with "watch_id" right after "type", and an id on every
// one: a cursor, the message's sequence number in the stream (see
// log.go), rather than a revision. Each message goes into the
// stream's pending buffer and its log at once (emit).

// emit appends one message of w to pending and records it in the log:
// after it, w's next revision is next. payload is the message's JSON
// object, starting with its watch_id.
func (ms *Stream) emit(w *streamWatcher, kind entryKind, event string, next int64, payload []byte) {
	ms.pendingBuffer()
	before := len(ms.pending.out)
	seq := ms.log.issued + 1
	var suffix []byte
	if ms.shared != nil {
		w.sent.advance(kind, next)
		suffix = ms.cursorSuffix()
	}
	ms.pending.out = stream.Encoder{}.FrameCursor(ms.pending.out, event, cmp.Or(event, stream.DefaultType), seq, suffix, payload)
	ms.log.issue(w, kind, next, len(ms.pending.out)-before)
}

// emitCreated queues w's created message: where it starts, and the
// revision the stream was consistent with then.
func (ms *Stream) emitCreated(w *streamWatcher) {
	p := watchIDPayload(ms.scratch[:0], w.id)
	p = appendHeaderField(p, w.createdRev)
	p = wire.AppendIntField(p, "start_revision", w.start)
	ms.scratch = append(p, '}')
	ms.emit(w, entryCreated, "created", w.start, ms.scratch)
}

// emitFinal queues w's final message again or for the first time.
func (ms *Stream) emitFinal(w *streamWatcher) {
	ms.emit(w, entryFinal, w.final.event, w.next, w.final.payload)
}

// encodeResponse queues one response of w's backend watch, as plan
// says (see planTake); it reports whether it ended the watcher.
func (ms *Stream) encodeResponse(w *streamWatcher, r *kv.WatchResponse, plan *takePlan) bool {
	switch {
	case r.CompactRevision != 0:
		p := watchIDPayload(ms.scratch[:0], w.id)
		p = appendHeaderField(p, r.Revision)
		p = wire.AppendIntField(p, "compact_revision", r.CompactRevision)
		ms.scratch = append(p, '}')
		ms.finish(w, "compacted", ms.scratch)
		return true
	case r.Canceled:
		// The backend ended the watch by itself: it is closing.
		ms.finish(w, "canceled", canceledPayload(ms.scratch[:0], w.id, cmp.Or(r.CancelReason, "canceled")))
		return true
	case r.Progress:
		if r.Revision+1 > w.next {
			w.next = r.Revision + 1
		}
		p := watchIDPayload(ms.scratch[:0], w.id)
		ms.scratch = append(appendHeaderField(p, r.Revision), '}')
		ms.emit(w, entryData, "progress", w.next, ms.scratch)
		return false
	}
	// One message per revision; a response may hold several.
	evs := r.Events
	for len(evs) > 0 {
		rev, n := stream.RevisionSpan(evs)
		w.next = rev + 1
		ms.emitEvents(w, rev, evs[:n], plan.field())
		evs = evs[n:]
	}
	return false
}

// emitEvents queues the message of one revision's events for w: frame's
// output for its payload, written in place, its events field from f
// when they are shared, else copied from another stream's encoding of
// them or encoded here.
func (ms *Stream) emitEvents(w *streamWatcher, rev int64, evs []kv.Event, f *sharedField) {
	sb := ms.pendingBuffer()
	before := sb.size()
	b := append(sb.out, "id: "...)
	b = strconv.AppendInt(b, ms.log.issued+1, 10)
	if ms.shared != nil {
		w.sent.advance(entryData, w.next)
		b = append(b, ms.cursorSuffix()...)
	}
	b = append(b, "\ndata: {\"type\":\""+stream.DefaultType+"\",\"watch_id\":"...)
	b = strconv.AppendInt(b, w.id, 10)
	b = appendHeaderField(b, rev)
	if f != nil {
		f.encoded(evs)
		sb.refs = append(sb.refs, sharedRef{at: len(b), f: f})
		sb.shared += f.size
	} else {
		b = stream.AppendRecentEvents(b, rev, evs)
	}
	sb.out = append(b, "}\n\n"...)
	ms.log.issue(w, entryData, w.next, sb.size()-before)
}

// watchIDPayload starts a message's JSON object with its watch_id.
func watchIDPayload(p []byte, id int64) []byte {
	p = append(p, `{"watch_id":`...)
	return strconv.AppendInt(p, id, 10)
}

// appendHeaderField appends `,"header":{"revision":R}`.
func appendHeaderField(p []byte, rev int64) []byte {
	p = append(p, `,"header":{"revision":`...)
	p = strconv.AppendInt(p, rev, 10)
	return append(p, '}')
}

// canceledPayload is a canceled message's object.
func canceledPayload(p []byte, id int64, reason string) []byte {
	p = watchIDPayload(p, id)
	p = append(p, `,"reason":`...)
	p = wire.AppendString(p, []byte(reason))
	return append(p, '}')
}
