package multi

import (
	"errors"
	"runtime"
	"time"

	"github.com/httpkv/httpkv/stream"
)

// streamConn is a connection reading a stream of many watchers. At most
// one reads a stream at a time: a newer one takes the stream over, and
// the older one ends at once (a client reconnecting may do so before the
// server has noticed its old connection is dead).
type streamConn struct {
	ready  chan struct{} // signalled when pending has bytes, or the stream is gone
	kicked chan struct{} // closed when another connection took the stream over, or it was cut
	sink   stream.Sink   // where it writes, once its loop runs; guarded by the stream's mu
}

// setSink records where c writes, so that it can be cut (evict).
func (ms *Stream) setSink(c *streamConn, sink stream.Sink) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	c.sink = sink
}

func (c *streamConn) signal() {
	select {
	case c.ready <- struct{}{}:
	default:
	}
}

// Attach makes a new connection the stream's reader, as attach does,
// and returns it for the stream loop to drive.
func (ms *Stream) Attach(cursor int64, hasCursor bool) (*Conn, error) {
	c, err := ms.attach(cursor, hasCursor)
	if err != nil {
		return nil, err
	}
	return &Conn{ms: ms, c: c}, nil
}

// attach makes a new connection the stream's reader, resuming right after
// the message whose id is cursor (0: before the first). Without a cursor
// the stream must never have been read past a fold point: the client
// could not say what it had.
func (ms *Stream) attach(cursor int64, hasCursor bool) (*streamConn, error) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.gone {
		return nil, ErrStreamNotFound
	}
	state := ms.log.check(cursor)
	switch {
	case !hasCursor && ms.log.folded > 0:
		return nil, ErrCursorNeeded
	case state == cursorUnknown:
		return nil, &CursorError{Problem: CursorUnknown, Seq: cursor}
	}
	if ms.conn != nil {
		close(ms.conn.kicked)
	}
	c := &streamConn{ready: make(chan struct{}, 1), kicked: make(chan struct{})}
	ms.conn = c
	ms.touchRecord()
	ms.idleGen++
	if ms.idle != nil {
		ms.idle.Stop()
	}
	if state == cursorTooOld {
		// Where each watcher stands for this client is not known: end
		// them all rather than resume one with a gap or a duplicate.
		ms.dropPending()
		ms.end("cursor too old", true)
		return c, nil
	}
	ms.resume(cursor)
	ms.account()
	ms.signalConn()
	ms.kick() // watchers that wait for room: the collector looks at them again
	return c, nil
}

// detach forgets c, unless another connection took over; the stream is
// dropped once it has had no connection for IdleTimeout.
func (ms *Stream) detach(c *streamConn) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.conn != c {
		return
	}
	ms.conn = nil
	if ms.gone {
		ms.dropPending() // nobody will write it
	}
	ms.parkDeferred() // nobody takes pending now
	ms.armIdle()
	ms.touchRecord() // the record's idle timeout starts now
	ms.account()
}

// armIdle starts the idle timer. The caller holds mu.
func (ms *Stream) armIdle() {
	if ms.gone {
		return
	}
	ms.idleGen++
	gen := ms.idleGen
	if ms.idle != nil {
		ms.idle.Stop()
	}
	ms.idle = time.AfterFunc(ms.reg.cfg.IdleTimeout, func() { ms.expire(gen) })
}

// expire drops the stream if it still has had no connection since the
// timer of generation gen was armed.
func (ms *Stream) expire(gen uint64) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.gone || ms.conn != nil || ms.idleGen != gen {
		return
	}
	if ms.shared != nil {
		// Its record's goroutine decides, after asking the record.
		select {
		case ms.shared.expire <- gen:
		default:
		}
		return
	}
	ms.markGone()
	ms.reg.forget(ms)
}

// evict lets go of what the stream holds for a reader that has stopped
// taking it (stalled: away, or making no progress for stallAfter), once
// the bound for all streams has refused a take. Its connection, if any,
// is cut: the client reconnects and resumes with the id of the last
// message it received. Its pending messages are dropped and stay in the
// log as if written: messages a connection wrote may have been lost with
// it too, and a resume after the last one received rewinds the watchers
// of every message after it, which replays them (resume). So one stream
// whose reader stops cannot keep the others from the room they need for
// longer than stallAfter, rather than until its connection's write
// deadline passes and the stream expires. It reports whether it did.
func (ms *Stream) evict() bool {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.gone || ms.pending == nil && ms.flow.writingCap == 0 || !ms.stalled() {
		return false
	}
	if c := ms.conn; c != nil {
		ms.conn = nil
		close(c.kicked)
		if c.sink != nil {
			c.sink.Cut() // its buffer comes back once its send fails (recycle)
		}
		ms.flow.writing = false
		ms.armIdle()
	}
	ms.dropPending()
	ms.log.written = ms.log.issued
	ms.parkDeferred()
	ms.account()
	return true
}

// takePending hands what is pending to c to write; done says c is to end
// after writing it (the stream is gone, or c was taken over).
func (ms *Stream) takePending(c *streamConn) (sb *streamBuffer, done bool) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.conn != c {
		return nil, true
	}
	sb, ms.pending = ms.pending, nil
	ms.log.written = ms.log.issued
	ms.trimLog()
	if sb != nil {
		ms.flow.writingCap = int64(cap(sb.out))
	}
	if !ms.gone {
		took := 0
		if sb != nil {
			took = len(sb.out)
		}
		ms.madeRoom(took)
	}
	ms.account()
	return sb, ms.gone
}

// shutdownConn ends every watcher with "shutting down" and hands what is
// pending to c, its last write.
func (ms *Stream) shutdownConn(c *streamConn) *streamBuffer {
	ms.mu.Lock()
	if ms.conn == c {
		ms.end("shutting down", false)
	}
	ms.mu.Unlock()
	sb, _ := ms.takePending(c)
	return sb
}

// Conn is a connection reading a stream of many watchers, as the
// stream loop drives it. Every revision ready across the watchers goes
// out in one write and one flush. The connection ends, and the stream
// goes on, when another connection takes the stream over (Done), or when
// the token it was opened with expires or is revoked: the client
// reconnects with a new one and its Last-Event-ID.
type Conn struct {
	ms *Stream
	c  *streamConn
}

// Open records where c writes, so that it can be cut (evict), and writes
// the retry delay.
func (mc *Conn) Open(s stream.Sink) bool {
	mc.ms.setSink(mc.c, s)
	return s.Send(stream.Encoder{}.Retry(nil, 1000))
}

// Ready is signalled when there is something pending, or the stream is
// gone.
func (mc *Conn) Ready() <-chan struct{} { return mc.c.ready }

// Done is closed when another connection took the stream over, or this
// one was cut (evict).
func (mc *Conn) Done() <-chan struct{} { return mc.c.kicked }

// Close lets go of the stream: it is dropped once it has had no
// connection for IdleTimeout.
func (mc *Conn) Close() { mc.ms.detach(mc.c) }

// Take writes what is pending.
func (mc *Conn) Take(s stream.Sink) (wrote, end bool) {
	// Let the collector finish what it is taking now, so that it joins
	// this write rather than the next.
	runtime.Gosched()
	sb, done := mc.ms.takePending(mc.c)
	if sb == nil {
		return false, done
	}
	ok := sendBuffer(s, sb)
	mc.ms.recycle(sb)
	if !ok || done {
		return true, true
	}
	mc.ms.wrote(mc.c)
	return true, false
}

// KeepAlive: idle this long, the stream keeps no buffer.
func (mc *Conn) KeepAlive(s stream.Sink) bool {
	mc.ms.shed()
	return s.Send(stream.Encoder{}.KeepAlive(nil))
}

// End ends the connection. Shutting down, the watchers of a gateway's
// own stream end with "shutting down", written last; a stream that is
// the deployment's goes on, and the client resumes it on another gateway
// with its Last-Event-ID. A token that expired or was revoked ends the
// connection only: a comment says why, to a client that reads comments.
func (mc *Conn) End(s stream.Sink, why error) {
	if !errors.Is(why, stream.ErrShutdown) {
		s.Send(append(append([]byte(": "), mc.ms.reg.reason(why)...), "; reconnect with a valid token and Last-Event-ID\n\n"...))
		return
	}
	if mc.ms.shared != nil {
		s.Send([]byte(": shutting down; reconnect with Last-Event-ID\n\n"))
		return
	}
	if sb := mc.ms.shutdownConn(mc.c); sb != nil {
		sendBuffer(s, sb)
		mc.ms.reg.dropBuffer(sb)
	}
}

// Abandon is what the transport calls instead of the stream loop when
// the connection cannot be served after all (the server is closing).
func (mc *Conn) Abandon() { mc.ms.detach(mc.c) }
