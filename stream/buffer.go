package stream

import "sync"

// Buffer holds what a watch stream encodes into: the bytes to write and
// the scratch space for one message's payload.
type Buffer struct {
	Out, Scratch []byte
}

// MaxPooledBuffer bounds what goes back to the pool: a rare large burst
// should not stay allocated.
const MaxPooledBuffer = 64 << 10

// buffers lends buffers to streams only while they write, so that ten
// thousand idle streams hold none (4 KiB or more each otherwise).
var buffers = sync.Pool{New: func() any { return new(Buffer) }}

// GetBuffer lends an empty buffer; PutBuffer takes it back.
func GetBuffer() *Buffer {
	sb := buffers.Get().(*Buffer)
	sb.Out = sb.Out[:0]
	return sb
}

// PutBuffer takes back a buffer GetBuffer lent, unless it grew past
// MaxPooledBuffer.
func PutBuffer(sb *Buffer) {
	if cap(sb.Out) <= MaxPooledBuffer && cap(sb.Scratch) <= MaxPooledBuffer {
		buffers.Put(sb)
	}
}
