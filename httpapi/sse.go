package httpapi

import (
	"bytes"
	"cmp"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/httpkv/httpkv/kv"

	"github.com/httpkv/httpkv/wire"
)

// streamEncoder frames watch responses as Server-Sent Events or, for
// clients that ask for application/x-ndjson, as one JSON object a line.
//
// SSE: data messages use the default event type and carry `id: <rev>`, one
// message per revision; progress messages carry the id too, since they are
// bookmarks; created, compacted and canceled are named events. Both forms
// carry the same JSON payloads, each with a "type" field first: the SSE
// event's name, or "events" for the default message.
type streamEncoder struct {
	ndjson bool
}

func (e streamEncoder) contentType() string {
	if e.ndjson {
		return "application/x-ndjson"
	}
	return "text/event-stream; charset=utf-8"
}

// noID marks a message without an SSE id.
const noID = -1

// defaultType is the "type" of a message of the default SSE event.
const defaultType = "events"

// frame appends one message of the SSE event named event ("" for the
// default one), typed as its name or defaultType; see frameTyped.
func (e streamEncoder) frame(b []byte, event string, id int64, payload []byte) []byte {
	return e.frameTyped(b, event, cmp.Or(event, defaultType), id, payload)
}

// frameTyped appends one message: SSE fields then `data:`, or an NDJSON
// line. payload is a JSON object, written with typ as its first field,
// "type": a client tells the messages apart by their data alone, as an
// NDJSON reader must and as generated clients that hand over only the
// data do. id is written unless it is noID.
func (e streamEncoder) frameTyped(b []byte, event, typ string, id int64, payload []byte) []byte {
	return e.frameCursor(b, event, typ, id, nil, payload)
}

// frameCursor is frameTyped with an id of id followed by suffix: a
// stream shared by gateways appends where its watchers stand (see
// multistream_cursor.go).
func (e streamEncoder) frameCursor(b []byte, event, typ string, id int64, suffix, payload []byte) []byte {
	if !e.ndjson {
		if id != noID {
			b = append(b, "id: "...)
			b = strconv.AppendInt(b, id, 10)
			b = append(b, suffix...)
			b = append(b, '\n')
		}
		if event != "" {
			b = append(b, "event: "...)
			b = append(b, event...)
			b = append(b, '\n')
		}
		b = append(b, "data: "...)
	}
	b = append(b, `{"type":"`...)
	b = append(b, typ...)
	b = append(b, '"')
	if len(payload) > 2 {
		b = append(b, ',')
		b = append(b, payload[1:]...)
	} else {
		b = append(b, '}')
	}
	if e.ndjson {
		return append(b, '\n')
	}
	return append(b, '\n', '\n')
}

// retry appends an SSE reconnection delay; NDJSON has none.
func (e streamEncoder) retry(b []byte, ms int) []byte {
	if e.ndjson {
		return b
	}
	b = append(b, "retry: "...)
	b = strconv.AppendInt(b, int64(ms), 10)
	return append(b, '\n', '\n')
}

// keepAlive appends what keeps an idle connection open.
func (e streamEncoder) keepAlive(b []byte) []byte {
	if e.ndjson {
		return append(b, '\n')
	}
	return append(b, ": keep-alive\n\n"...)
}

func (e streamEncoder) created(b []byte, rev, start int64) []byte {
	p := wire.AppendHeader(nil, rev)
	p = wire.AppendIntField(p, "start_revision", start)
	// The created message is a bookmark too: a browser that reconnects
	// before any event arrived sends it back as Last-Event-ID and resumes
	// at start, instead of watching from a later "now" and missing what
	// happened in between. A watch from revision 1 asked for it in its
	// URL, which the browser reuses; revision 0 is no revision.
	id := start - 1
	if id < 1 {
		id = noID
	}
	return e.frame(b, "created", id, append(p, '}'))
}

// response appends one watch response; final reports that it ends the
// stream.
func (e streamEncoder) response(b, scratch []byte, r *kv.WatchResponse) (out, s []byte, final bool) {
	switch {
	case r.CompactRevision != 0:
		p := wire.AppendHeader(scratch[:0], r.Revision)
		p = wire.AppendIntField(p, "compact_revision", r.CompactRevision)
		b = e.retry(b, 60000)
		return e.frame(b, "compacted", noID, append(p, '}')), p, true
	case r.Canceled:
		p := append(scratch[:0], `{"reason":`...)
		reason := r.CancelReason
		if reason == "" {
			reason = "canceled"
		}
		p = wire.AppendString(p, []byte(reason))
		return e.frame(b, "canceled", noID, append(p, '}')), p, true
	case r.Progress:
		p := append(wire.AppendHeader(scratch[:0], r.Revision), '}')
		return e.frame(b, "progress", r.Revision, p), p, false
	}
	// One message per revision; a response may hold several.
	evs := r.Events
	for len(evs) > 0 {
		rev, n := revisionSpan(evs)
		b = e.events(b, rev, evs[:n])
		evs = evs[n:]
	}
	return b, scratch, false
}

// events appends the message of one revision's events. It is frame's
// output for their payload, written in place: catching up writes one
// such message per revision, and building each payload apart to copy it
// in after its "type" cost a copy of every event.
func (e streamEncoder) events(b []byte, rev int64, evs []kv.Event) []byte {
	b = e.eventsHead(b, rev)
	b = wire.AppendEventsField(b, evs)
	return e.eventsEnd(b)
}

// eventsHead appends the start of the message of revision rev's events,
// up to its header's end; the events field follows.
func (e streamEncoder) eventsHead(b []byte, rev int64) []byte {
	if !e.ndjson {
		b = append(b, "id: "...)
		b = strconv.AppendInt(b, rev, 10)
		b = append(b, "\ndata: "...)
	}
	b = append(b, `{"type":"`+defaultType+`","header":{"revision":`...)
	b = strconv.AppendInt(b, rev, 10)
	return append(b, '}')
}

// eventsEnd appends what ends a message of events, after its events
// field.
func (e streamEncoder) eventsEnd(b []byte) []byte {
	if e.ndjson {
		return append(b, '}', '\n')
	}
	return append(b, '}', '\n', '\n')
}

// revisionSpan returns the revision of evs[0] and how many events of evs,
// from the first, are of it.
func revisionSpan(evs []kv.Event) (rev int64, n int) {
	rev, n = evs[0].KV.ModRevision, 1
	for n < len(evs) && evs[n].KV.ModRevision == rev {
		n++
	}
	return rev, n
}

// encodedEvents is the events field of one revision's message,
// `,"events":[...]`, as a stream encoded it, with the events it was
// encoded from.
type encodedEvents struct {
	first *kv.Event // &events[0]: it keeps them from being reused
	n     int
	json  []byte
}

// recentEncoded holds, by revision modulo its size, the events fields
// encoded last by any stream, single watches and streams of many
// watchers alike. The scheduler hands one revision's events to every
// watcher that takes them as they are in one shared slice, and never
// changes them after: ten thousand streams of one prefix then encode each
// revision once, not ten thousand times, as an HTTP server that formats
// an event once and writes it to every subscriber does. Streams a few
// revisions apart each find theirs.
var recentEncoded [64]atomic.Pointer[encodedEvents]

// maxSharedMessage bounds an events field recentEncoded keeps: it holds
// at most 64 of them, and their events. (A stream of many watchers
// shares larger ones another way: sharedEvents.)
const maxSharedMessage = 16 << 10

// sharedEvents is events for a response of the one revision rev (see
// appendRecentEvents).
func (e streamEncoder) sharedEvents(b []byte, rev int64, evs []kv.Event) []byte {
	b = e.eventsHead(b, rev)
	b = appendRecentEvents(b, rev, evs)
	return e.eventsEnd(b)
}

// appendRecentEvents appends the events field of evs, of revision rev:
// the one another stream encoded for the same events if it is in
// recentEncoded, and else encodes it and offers it to the others.
// Identity of the slice is identity of the message: the slice's events
// are never changed once delivered (those of watchers that asked for
// previous versions are their own, filled before they are encoded), and
// the entry keeps the slice alive, so its address is not reused.
func appendRecentEvents(b []byte, rev int64, evs []kv.Event) []byte {
	if c := recentEvents(rev, evs); c != nil {
		return append(b, c...)
	}
	start := len(b)
	b = wire.AppendEventsField(b, evs)
	if len(b)-start <= maxSharedMessage {
		recentEncoded[uint64(rev)%uint64(len(recentEncoded))].Store(&encodedEvents{first: &evs[0], n: len(evs), json: bytes.Clone(b[start:])})
	}
	return b
}

// recentEvents returns the events field of evs, of revision rev, if it
// is in recentEncoded, or nil.
func recentEvents(rev int64, evs []kv.Event) []byte {
	if c := recentEncoded[uint64(rev)%uint64(len(recentEncoded))].Load(); c != nil && c.first == &evs[0] && c.n == len(evs) {
		return c.json
	}
	return nil
}

// streamBuffer holds what a watch stream encodes into: the bytes to write
// and the scratch space for one message's payload. A stream of many
// watchers also writes shared fields between the bytes of out (refs, in
// order; see multistream_shared.go), which hold shared bytes.
type streamBuffer struct {
	out, scratch []byte
	refs         []sharedRef
	shared       int
}

// size is the bytes the buffer writes: its own, and its shared fields'.
func (sb *streamBuffer) size() int { return len(sb.out) + sb.shared }

// maxPooledStreamBuffer bounds what goes back to the pool: a rare large
// burst should not stay allocated.
const maxPooledStreamBuffer = 64 << 10

// streamBuffers lends buffers to streams only while they write, so that
// ten thousand idle streams hold none (4 KiB or more each otherwise).
var streamBuffers = sync.Pool{New: func() any { return new(streamBuffer) }}

func getStreamBuffer() *streamBuffer {
	sb := streamBuffers.Get().(*streamBuffer)
	sb.out = sb.out[:0]
	return sb
}

func putStreamBuffer(sb *streamBuffer) {
	if cap(sb.out) <= maxPooledStreamBuffer && cap(sb.scratch) <= maxPooledStreamBuffer {
		streamBuffers.Put(sb)
	}
}
