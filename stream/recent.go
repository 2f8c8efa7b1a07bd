package stream

import (
	"bytes"
	"sync/atomic"

	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/wire"
)

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

// MaxSharedMessage bounds an events field recentEncoded keeps: it holds
// at most 64 of them, and their events. (A stream of many watchers
// shares larger ones another way: its shared fields.)
const MaxSharedMessage = 16 << 10

// SharedEvents is events for a response of the one revision rev (see
// AppendRecentEvents).
func (e Encoder) SharedEvents(b []byte, rev int64, evs []kv.Event) []byte {
	b = e.EventsHead(b, rev)
	b = AppendRecentEvents(b, rev, evs)
	return e.EventsEnd(b)
}

// AppendRecentEvents appends the events field of evs, of revision rev:
// the one another stream encoded for the same events if it is in
// recentEncoded, and else encodes it and offers it to the others.
// Identity of the slice is identity of the message: the slice's events
// are never changed once delivered (those of watchers that asked for
// previous versions are their own, filled before they are encoded), and
// the entry keeps the slice alive, so its address is not reused.
func AppendRecentEvents(b []byte, rev int64, evs []kv.Event) []byte {
	if c := RecentEvents(rev, evs); c != nil {
		return append(b, c...)
	}
	start := len(b)
	b = wire.AppendEventsField(b, evs)
	if len(b)-start <= MaxSharedMessage {
		recentEncoded[uint64(rev)%uint64(len(recentEncoded))].Store(&encodedEvents{first: &evs[0], n: len(evs), json: bytes.Clone(b[start:])})
	}
	return b
}

// RecentEvents returns the events field of evs, of revision rev, if it
// is in recentEncoded, or nil.
func RecentEvents(rev int64, evs []kv.Event) []byte {
	if c := recentEncoded[uint64(rev)%uint64(len(recentEncoded))].Load(); c != nil && c.first == &evs[0] && c.n == len(evs) {
		return c.json
	}
	return nil
}
