package multi

import (
	"sync"
	"time"

	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/stream"

	"github.com/httpkv/httpkv/wire"
)

// Large events, shared by the streams of many watchers.
//
// A stream's pending buffer holds what it encoded until its connection
// takes it, which a stalled reader never does for as long as its
// connection lasts. A revision of large values copied into each stream's
// buffer was then a copy per stream: a put of 1.4 MB of control bytes
// (each escaped in six) held 8.4 MB in each of a user's 32 stalled
// streams. So an events field larger than stream.MaxSharedMessage is encoded
// once, into a sharedField that every stream carrying the same events
// refers to (the scheduler hands the watchers of one revision one shared
// slice of its events, see watch.Store's notify), and the connection
// writes it between the stream's own bytes. The registry counts it once
// against TotalBufferBytes while any stream holds it.

// sharedField is the events field of one revision's message,
// `,"events":[...]`, as the streams that carry those events share it.
type sharedField struct {
	key  fieldKey
	size int // len(json), known before it is encoded
	// json is encoded once, by the first stream to write it.
	once sync.Once
	json []byte
	// refs counts the streams' buffers that refer to it; guarded by the
	// registry's fieldsMu.
	refs int
}

// fieldKey is the identity of a slice of events: the scheduler never
// changes events once delivered, and the field holds the slice while it
// is in the registry, so its address is not reused meanwhile.
type fieldKey struct {
	first *kv.Event
	n     int
}

// sharedRef places a shared field in a stream's buffer: before out[at:].
type sharedRef struct {
	at int
	f  *sharedField
}

// shareable reports whether the events field of evs, of size bytes, is
// shared rather than copied: it is large, and the events are the
// scheduler's shared ones (events with previous versions are a
// watcher's own).
func shareable(evs []kv.Event, size int) bool {
	if size <= stream.MaxSharedMessage {
		return false
	}
	for i := range evs {
		if evs[i].PrevKV != nil {
			return false
		}
	}
	return true
}

// pinField returns the shared field of evs, of size bytes, and counts a
// reference to it: a new one is made and counted against
// TotalBufferBytes (reserve), unless there is no room for it, and then
// ok is false.
func (g *Registry) pinField(evs []kv.Event, size int) (f *sharedField, ok bool) {
	k := fieldKey{first: &evs[0], n: len(evs)}
	g.fieldsMu.Lock()
	defer g.fieldsMu.Unlock()
	if f := g.fields[k]; f != nil {
		f.refs++
		return f, true
	}
	if !g.reserve(int64(size)) {
		return nil, false
	}
	f = &sharedField{key: k, size: size, refs: 1}
	g.fields[k] = f
	return f, true
}

// unpinField drops a reference to f; the last one lets it go.
func (g *Registry) unpinField(f *sharedField) {
	g.fieldsMu.Lock()
	defer g.fieldsMu.Unlock()
	if f.refs--; f.refs > 0 {
		return
	}
	delete(g.fields, f.key)
	g.buffered.Add(-int64(f.size))
}

// encoded returns f's JSON, encoding it from evs if no stream has yet.
func (f *sharedField) encoded(evs []kv.Event) []byte {
	f.once.Do(func() { f.json = wire.AppendEventsField(make([]byte, 0, f.size), evs) })
	return f.json
}

// reserve counts n bytes more against TotalBufferBytes if they fit, or
// if the streams hold less than a sixteenth of it: so that a take larger
// than the whole bound still goes through, one at a time. It reports
// whether it did. What it counts is given back with unreserve, or kept
// as a shared field's count.
func (g *Registry) reserve(n int64) bool {
	for {
		cur := g.buffered.Load()
		if cur+n > g.cfg.TotalBufferBytes && cur > g.cfg.TotalBufferBytes/16 {
			return false
		}
		if g.buffered.CompareAndSwap(cur, cur+n) {
			return true
		}
	}
}

func (g *Registry) unreserve(n int64) { g.buffered.Add(-n) }

// dropBuffer lets go of a stream's buffer that will not be written (or
// was): its shared fields, then the buffer.
func (g *Registry) dropBuffer(sb *streamBuffer) {
	g.unpinRefs(sb)
	putStreamBuffer(sb)
}

// unpinRefs drops sb's references to shared fields.
func (g *Registry) unpinRefs(sb *streamBuffer) {
	for i, r := range sb.refs {
		g.unpinField(r.f)
		sb.refs[i] = sharedRef{}
	}
	sb.refs, sb.shared = sb.refs[:0], 0
}

// sendBuffer writes sb, its own bytes and the shared fields between
// them, stream.Chunk at most a send, so that each send's deadline is for
// a chunk, as a single watch's are.
func sendBuffer(sink stream.Sink, sb *streamBuffer) bool {
	at := 0
	for _, r := range sb.refs {
		if !sendChunks(sink, sb.out[at:r.at]) || !sendChunks(sink, r.f.json) {
			return false
		}
		at = r.at
	}
	return sendChunks(sink, sb.out[at:])
}

// sendChunks sends b, stream.Chunk at most a send.
func sendChunks(sink stream.Sink, b []byte) bool {
	for len(b) > 0 {
		n := min(len(b), stream.Chunk)
		if !sink.Send(b[:n]) {
			return false
		}
		b = b[n:]
	}
	return true
}

// evictStalled runs after a take found no room within TotalBufferBytes:
// it lets go of what streams hold for readers that have stopped taking it
// (Stream.evict), at most every stallAfter/4. A collector calls it
// holding no stream's mu.
func (g *Registry) evictStalled() {
	if !g.crowded.Load() {
		return
	}
	now, last := time.Now().UnixNano(), g.lastEvict.Load()
	if now-last < int64(stallAfter/4) || !g.lastEvict.CompareAndSwap(last, now) {
		return
	}
	g.crowded.Store(false)
	g.mu.Lock()
	all := make([]*Stream, 0, len(g.streams))
	for _, ms := range g.streams {
		all = append(all, ms)
	}
	g.mu.Unlock()
	for _, ms := range all {
		if ms.evict() {
			g.evictions.Add(1)
		}
	}
}
