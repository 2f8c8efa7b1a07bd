package multi

import (
	"sync"

	"github.com/httpkv/httpkv/stream"
)

// streamBuffer is what a stream of many watchers encodes into: the bytes
// to write, and the shared fields written between them (refs, in order;
// see shared.go), which hold shared bytes.
type streamBuffer struct {
	out    []byte
	refs   []sharedRef
	shared int
}

// size is the bytes the buffer writes: its own, and its shared fields'.
func (sb *streamBuffer) size() int { return len(sb.out) + sb.shared }

// streamBuffers lends buffers to streams only while they have something
// pending or being written, so that ten thousand idle streams hold none.
var streamBuffers = sync.Pool{New: func() any { return new(streamBuffer) }}

func getStreamBuffer() *streamBuffer {
	sb := streamBuffers.Get().(*streamBuffer)
	sb.out = sb.out[:0]
	return sb
}

// putStreamBuffer takes back a buffer, unless it grew past what the pool
// keeps.
func putStreamBuffer(sb *streamBuffer) {
	if cap(sb.out) <= stream.MaxPooledBuffer {
		streamBuffers.Put(sb)
	}
}
