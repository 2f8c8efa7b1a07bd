package stream

import "github.com/httpkv/httpkv/kv"

// Chunk is how much of a take a stream encodes before it writes: a
// watcher catching up takes a page of history at a time (up to the
// watcher's bound, a MiB or more of JSON), and encoding it whole grew
// the buffer by doubling, copying it over and over, and left megabytes
// for the collector to clear and the runtime to hand back to the
// system. Written in chunks, the buffer stays a pooled one and the
// client starts reading at once.
const Chunk = 32 << 10

// WriteResponses encodes rs into sb, sending every Chunk bytes,
// and leaves what remains unsent in sb.Out. ok is false when the client
// is gone; ended, when a final response was met: it is sent, with all
// before it, and the stream ends. wrote reports whether anything was
// sent.
func WriteResponses(sink Sink, enc Encoder, sb *Buffer, rs []kv.WatchResponse) (ok, ended, wrote bool) {
	flush := func() bool {
		if len(sb.Out) < Chunk {
			return true
		}
		wrote = true
		ok := sink.Send(sb.Out)
		sb.Out = sb.Out[:0]
		return ok
	}
	for i := range rs {
		r := &rs[i]
		if r.CompactRevision != 0 || r.Canceled || r.Progress || len(r.Events) == 0 {
			sb.Out, sb.Scratch, ended = enc.Response(sb.Out, sb.Scratch, r)
			if ended {
				return sink.Send(sb.Out), true, true
			}
			if !flush() {
				return false, false, true
			}
			continue
		}
		// Events: a chunk may end after any revision's message, so that
		// a response of many stays within one chunk's buffer.
		for evs := r.Events; len(evs) > 0; {
			rev, n := RevisionSpan(evs)
			switch {
			case revisionBytes(evs[:n]) > largeRevision:
				// Sent as it is encoded: see large.go.
				c := chunkWriter{sink: sink, sb: sb, ok: true}
				ok := c.writeLargeEvents(enc, rev, evs[:n])
				wrote = wrote || c.sent
				if !ok {
					return false, false, true
				}
			case n == len(r.Events):
				sb.Out = enc.SharedEvents(sb.Out, rev, evs)
			default:
				sb.Out = enc.Events(sb.Out, rev, evs[:n])
			}
			evs = evs[n:]
			if !flush() {
				return false, false, true
			}
		}
	}
	return true, false, wrote
}
