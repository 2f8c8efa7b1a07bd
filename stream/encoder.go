package stream

import (
	"cmp"
	"strconv"

	"github.com/httpkv/httpkv/kv"

	"github.com/httpkv/httpkv/wire"
)

// Encoder frames watch responses as Server-Sent Events or, for
// clients that ask for application/x-ndjson, as one JSON object a line.
//
// SSE: data messages use the default event type and carry `id: <rev>`, one
// message per revision; progress messages carry the id too, since they are
// bookmarks; created, compacted and canceled are named events. Both forms
// carry the same JSON payloads, each with a "type" field first: the SSE
// event's name, or "events" for the default message.
type Encoder struct {
	NDJSON bool
}

// ContentType is the stream's media type.
func (e Encoder) ContentType() string {
	if e.NDJSON {
		return "application/x-ndjson"
	}
	return "text/event-stream; charset=utf-8"
}

// NoID marks a message without an SSE id.
const NoID = -1

// DefaultType is the "type" of a message of the default SSE event.
const DefaultType = "events"

// Frame appends one message of the SSE event named event ("" for the
// default one), typed as its name or DefaultType; see FrameTyped.
func (e Encoder) Frame(b []byte, event string, id int64, payload []byte) []byte {
	return e.FrameTyped(b, event, cmp.Or(event, DefaultType), id, payload)
}

// FrameTyped appends one message: SSE fields then `data:`, or an NDJSON
// line. payload is a JSON object, written with typ as its first field,
// "type": a client tells the messages apart by their data alone, as an
// NDJSON reader must and as generated clients that hand over only the
// data do. id is written unless it is NoID.
func (e Encoder) FrameTyped(b []byte, event, typ string, id int64, payload []byte) []byte {
	return e.FrameCursor(b, event, typ, id, nil, payload)
}

// FrameCursor is FrameTyped with an id of id followed by suffix: a
// stream shared by gateways appends where its watchers stand (see
// stream/multi).
func (e Encoder) FrameCursor(b []byte, event, typ string, id int64, suffix, payload []byte) []byte {
	if !e.NDJSON {
		if id != NoID {
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
	if e.NDJSON {
		return append(b, '\n')
	}
	return append(b, '\n', '\n')
}

// Retry appends an SSE reconnection delay; NDJSON has none.
func (e Encoder) Retry(b []byte, ms int) []byte {
	if e.NDJSON {
		return b
	}
	b = append(b, "retry: "...)
	b = strconv.AppendInt(b, int64(ms), 10)
	return append(b, '\n', '\n')
}

// KeepAlive appends what keeps an idle connection open.
func (e Encoder) KeepAlive(b []byte) []byte {
	if e.NDJSON {
		return append(b, '\n')
	}
	return append(b, ": keep-alive\n\n"...)
}

// Created appends a watch's created message: where it starts, and the
// revision the store had when it began.
func (e Encoder) Created(b []byte, rev, start int64) []byte {
	p := wire.AppendHeader(nil, rev)
	p = wire.AppendIntField(p, "start_revision", start)
	// The created message is a bookmark too: a browser that reconnects
	// before any event arrived sends it back as Last-Event-ID and resumes
	// at start, instead of watching from a later "now" and missing what
	// happened in between. A watch from revision 1 asked for it in its
	// URL, which the browser reuses; revision 0 is no revision.
	id := start - 1
	if id < 1 {
		id = NoID
	}
	return e.Frame(b, "created", id, append(p, '}'))
}

// Response appends one watch response; final reports that it ends the
// stream.
func (e Encoder) Response(b, scratch []byte, r *kv.WatchResponse) (out, s []byte, final bool) {
	switch {
	case r.CompactRevision != 0:
		p := wire.AppendHeader(scratch[:0], r.Revision)
		p = wire.AppendIntField(p, "compact_revision", r.CompactRevision)
		b = e.Retry(b, 60000)
		return e.Frame(b, "compacted", NoID, append(p, '}')), p, true
	case r.Canceled:
		p := append(scratch[:0], `{"reason":`...)
		reason := r.CancelReason
		if reason == "" {
			reason = "canceled"
		}
		p = wire.AppendString(p, []byte(reason))
		return e.Frame(b, "canceled", NoID, append(p, '}')), p, true
	case r.Progress:
		p := append(wire.AppendHeader(scratch[:0], r.Revision), '}')
		return e.Frame(b, "progress", r.Revision, p), p, false
	}
	// One message per revision; a response may hold several.
	evs := r.Events
	for len(evs) > 0 {
		rev, n := RevisionSpan(evs)
		b = e.Events(b, rev, evs[:n])
		evs = evs[n:]
	}
	return b, scratch, false
}

// Events appends the message of one revision's events. It is Frame's
// output for their payload, written in place: catching up writes one
// such message per revision, and building each payload apart to copy it
// in after its "type" cost a copy of every event.
func (e Encoder) Events(b []byte, rev int64, evs []kv.Event) []byte {
	b = e.EventsHead(b, rev)
	b = wire.AppendEventsField(b, evs)
	return e.EventsEnd(b)
}

// EventsHead appends the start of the message of revision rev's events,
// up to its header's end; the events field follows.
func (e Encoder) EventsHead(b []byte, rev int64) []byte {
	if !e.NDJSON {
		b = append(b, "id: "...)
		b = strconv.AppendInt(b, rev, 10)
		b = append(b, "\ndata: "...)
	}
	b = append(b, `{"type":"`+DefaultType+`","header":{"revision":`...)
	b = strconv.AppendInt(b, rev, 10)
	return append(b, '}')
}

// EventsEnd appends what ends a message of events, after its events
// field.
func (e Encoder) EventsEnd(b []byte) []byte {
	if e.NDJSON {
		return append(b, '}', '\n')
	}
	return append(b, '}', '\n', '\n')
}

// RevisionSpan returns the revision of evs[0] and how many events of evs,
// from the first, are of it.
func RevisionSpan(evs []kv.Event) (rev int64, n int) {
	rev, n = evs[0].KV.ModRevision, 1
	for n < len(evs) && evs[n].KV.ModRevision == rev {
		n++
	}
	return rev, n
}
