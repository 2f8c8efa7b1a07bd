package stream

import (
	"encoding/base64"
	"unicode/utf8"

	"github.com/httpkv/httpkv/kv"

	"github.com/httpkv/httpkv/wire"
)

// A revision whose keys and values are large is encoded a piece at a
// time, and sent every Chunk bytes, rather than whole: a stream
// whose client has stopped reading blocks in its send holding the bytes
// it encoded, and a whole message of large values (one per stalled
// stream, times every stream of a crowd that stopped reading) was
// memory no bound counted. Encoded in pieces, a stream holds at most a
// chunk and a piece of encoded bytes, besides the events themselves,
// which the watch store counts against its bounds.

// largeRevision is the size of a revision's keys and values past which
// its message is encoded in pieces.
const largeRevision = Chunk

// encodePiece is how many bytes of a key or value are encoded at once: a
// multiple of 3, so that base64 pieces join into one encoding, and small
// enough that one escaped piece (up to six bytes a byte) adds little to
// a chunk.
const encodePiece = 3 << 10

// revisionBytes is the size of the keys and values of evs.
func revisionBytes(evs []kv.Event) int {
	n := 0
	for i := range evs {
		n += len(evs[i].KV.Key) + len(evs[i].KV.Value)
		if p := evs[i].PrevKV; p != nil {
			n += len(p.Key) + len(p.Value)
		}
	}
	return n
}

// chunkWriter encodes into a stream's buffer and sends it whenever it
// holds a chunk. Once a send fails it sends nothing more.
type chunkWriter struct {
	sink Sink
	sb   *Buffer
	ok   bool // no send has failed
	sent bool // something was sent
}

func (c *chunkWriter) flush() {
	if c.ok && len(c.sb.Out) >= Chunk {
		c.sent = true
		c.ok = c.sink.Send(c.sb.Out)
		c.sb.Out = c.sb.Out[:0]
	}
}

// writeLargeEvents is events for a revision of large keys or values: the
// same bytes, sent every Chunk as they are encoded, the rest left
// in the buffer. It reports false once a send failed.
func (c *chunkWriter) writeLargeEvents(e Encoder, rev int64, evs []kv.Event) bool {
	c.sb.Out = append(e.EventsHead(c.sb.Out, rev), `,"events":[`...)
	for i := range evs {
		ev := &evs[i]
		if i > 0 {
			c.sb.Out = append(c.sb.Out, ',')
		}
		c.sb.Out = append(c.sb.Out, `{"type":"`...)
		c.sb.Out = append(c.sb.Out, ev.Type.String()...)
		c.sb.Out = append(c.sb.Out, `","kv":`...)
		c.kv(&ev.KV, ev.Type == 0)
		if ev.PrevKV != nil {
			c.sb.Out = append(c.sb.Out, `,"prev_kv":`...)
			c.kv(ev.PrevKV, true)
		}
		c.sb.Out = append(c.sb.Out, '}')
		if !c.ok {
			return false
		}
	}
	c.sb.Out = e.EventsEnd(append(c.sb.Out, ']'))
	c.flush()
	return c.ok
}

// kv is wire.AppendKV, its key and value encoded in pieces.
func (c *chunkWriter) kv(entry *kv.KeyValue, withValue bool) {
	c.sb.Out = append(c.sb.Out, '{')
	c.bytesField("key", entry.Key, true)
	if withValue {
		c.bytesField("value", entry.Value, false)
	}
	b := wire.AppendIntField(c.sb.Out, "create_revision", entry.CreateRevision)
	b = wire.AppendIntField(b, "mod_revision", entry.ModRevision)
	b = wire.AppendIntField(b, "version", entry.Version)
	b = wire.AppendIntField(b, "lease", entry.Lease)
	c.sb.Out = append(b, '}')
}

// bytesField is wire.AppendBytesField, b encoded in pieces.
func (c *chunkWriter) bytesField(name string, b []byte, first bool) {
	out := c.sb.Out
	if !first {
		out = append(out, ',')
	}
	out = append(out, '"')
	out = append(out, name...)
	text := utf8.Valid(b)
	if text {
		out = append(out, `":"`...)
	} else {
		out = append(out, `_base64":"`...)
	}
	c.sb.Out = out
	for len(b) > 0 && c.ok {
		n := min(len(b), encodePiece)
		if text {
			// End the piece at a rune's start: a rune is escaped whole.
			for n < len(b) && !utf8.RuneStart(b[n]) {
				n--
			}
			c.sb.Out = wire.AppendStringBody(c.sb.Out, b[:n])
		} else {
			c.sb.Out = base64.StdEncoding.AppendEncode(c.sb.Out, b[:n])
		}
		b = b[n:]
		c.flush()
	}
	c.sb.Out = append(c.sb.Out, '"')
}
