package httpapi

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"

	"time"

	"github.com/httpkv/httpkv/kv"
)

// streamWriteTimeout bounds each send on a watch stream, over a hijacked
// HTTP/1 connection or an HTTP/2 stream: a client that takes no bytes for
// this long is treated as gone, so that a stuck client cannot hold a
// stream forever. (Shutdown does not wait for it: see Handler.Shutdown.)
const streamWriteTimeout = 30 * time.Second

// streamSink is where a watch stream writes.
type streamSink interface {
	// send writes and flushes b; false means the client is gone.
	send(b []byte) bool
	// gone is closed when the client goes away.
	gone() <-chan struct{}
	// close ends the response and releases what the sink holds.
	close()
	// cut makes a send in progress, or the next, fail: it may be called
	// from another goroutine than the one sending, to let go of a client
	// that has stopped reading.
	cut()
}

// responseSink writes through the server's ResponseWriter: HTTP/2, or an
// HTTP/1 connection that could not be taken over.
type responseSink struct {
	w    http.ResponseWriter
	rc   *http.ResponseController
	done <-chan struct{}
}

// send writes under a deadline, and lifts it once the bytes are out: an
// HTTP/2 stream whose deadline passes while it is idle is reset.
func (s *responseSink) send(b []byte) bool {
	if err := s.rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return false
	}
	if _, err := s.w.Write(b); err != nil || s.rc.Flush() != nil {
		return false
	}
	_ = s.rc.SetWriteDeadline(time.Time{})
	return true
}

func (s *responseSink) gone() <-chan struct{} { return s.done }
func (s *responseSink) close()                {}
func (s *responseSink) cut()                  { _ = s.rc.SetWriteDeadline(time.Now()) }

// connSink writes to a hijacked HTTP/1 connection. The response has no
// length and no chunking: it ends when the connection closes, which is
// what "Connection: close" announces. The handler's hangups notice the
// client leaving, or where they cannot, a small reader of its own.
type connSink struct {
	conn net.Conn
	left chan struct{} // closed when the client leaves
	// forget stops the hangups watching conn; nil when a reader does.
	forget func()
	reader chan struct{} // closed when the reader, if any, has returned
	// deadlineSet is when the write deadline was last moved to
	// streamWriteTimeout ahead; see send.
	deadlineSet time.Time
}

// deadlineSlack is how stale a stream's write deadline may grow before a
// send moves it: setting it costs a lock and a timer change, and with
// ten thousand streams sending an event each, setting it on every send
// was a tenth of their cost. A send thus has between streamWriteTimeout
// less deadlineSlack and streamWriteTimeout.
const deadlineSlack = time.Second

// hijack takes the connection of w over and writes the response head from
// w's headers (those the middleware set included); hangups, when not nil,
// notice its client leaving. ok is false when w cannot be taken over
// (HTTP/2, a recorder): answer through w then. A non-nil error means the
// connection was taken and is already lost.
func hijack(w http.ResponseWriter, hangups *hangups) (sink *connSink, ok bool, err error) {
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return nil, false, nil
	}
	hd := w.Header().Clone()
	hd.Set("Connection", "close")
	hd.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	head := bufio.NewWriterSize(conn, 1024)
	_, _ = head.WriteString("HTTP/1.1 200 OK\r\n")
	_ = hd.Write(head)
	_, _ = head.WriteString("\r\n")
	now := time.Now()
	// The server's read deadline, if any, is for requests: a stream reads
	// only to drop what its client sends.
	_ = conn.SetReadDeadline(time.Time{})
	_ = conn.SetWriteDeadline(now.Add(streamWriteTimeout))
	if err := head.Flush(); err != nil {
		conn.Close()
		return nil, true, err
	}
	// Whatever the client sent after its request is of no use; the read
	// buffer and its 4 KiB go with brw.
	_ = brw
	s := &connSink{conn: conn, left: make(chan struct{}), deadlineSet: now}
	if hangups != nil {
		s.forget, _ = hangups.watch(conn, s.left)
	}
	if s.forget == nil {
		s.reader = make(chan struct{})
		go s.read()
	}
	return s, true, nil
}

// read waits for the client to close its side; the stream owns it and
// waits for it in close.
func (s *connSink) read() {
	defer close(s.reader)
	var buf [64]byte
	for {
		if _, err := s.conn.Read(buf[:]); err != nil {
			close(s.left)
			return
		}
	}
}

func (s *connSink) send(b []byte) bool {
	if now := time.Now(); now.Sub(s.deadlineSet) >= deadlineSlack {
		if err := s.conn.SetWriteDeadline(now.Add(streamWriteTimeout)); err != nil {
			return false
		}
		s.deadlineSet = now
	}
	_, err := s.conn.Write(b)
	return err == nil
}

func (s *connSink) gone() <-chan struct{} { return s.left }
func (s *connSink) cut()                  { s.conn.Close() }

func (s *connSink) close() {
	if s.forget != nil {
		s.forget()
	}
	s.conn.Close()
	if s.reader != nil {
		<-s.reader
	}
}

// watchStream is one open watch: its watcher, its framing, and what it
// needs to check again that its caller may still read it.
type watchStream struct {
	stream      kv.WatchStream
	enc         streamEncoder
	rev         int64 // the store's revision when the watch began
	auth        streamAuthorizer
	authChanged <-chan struct{}
	caller      streamCaller
	access      Access
	requestID   string
}

// pump writes a watch to its sink until the client leaves, the watch ends
// (compacted, canceled) or the handler closes. It closes the watcher and
// the sink before returning.
func (h *Handler) pump(ws *watchStream, sink streamSink) {
	defer sink.close()
	defer ws.stream.Close()
	start := time.Now()
	defer func() {
		h.cfg.Logger.Debug().Str("request_id", ws.requestID).Dur("duration", time.Since(start)).Msg("watch stream ended")
	}()
	enc := ws.enc
	sb := getStreamBuffer()
	sb.out = enc.retry(sb.out, 1000)
	sb.out = enc.created(sb.out, ws.rev, ws.stream.StartRevision())
	ok := sink.send(sb.out)
	putStreamBuffer(sb)
	if !ok {
		return
	}
	keepAlive := time.NewTicker(h.cfg.KeepAliveInterval)
	defer keepAlive.Stop()
	// resetKeepAlive puts the next keep-alive an interval after a write,
	// moving it at most once a second (a fraction of the interval, when
	// that is shorter): the timer's lock is taken per move, and a stream
	// of a busy prefix writes many times a second.
	lastReset := time.Now()
	resetKeepAlive := func() {
		if now := time.Now(); now.Sub(lastReset) >= min(time.Second, h.cfg.KeepAliveInterval/8) {
			keepAlive.Reset(h.cfg.KeepAliveInterval)
			lastReset = now
		}
	}
	// The stream ends when the token it was opened with expires.
	var expired <-chan time.Time
	if !ws.caller.Expires.IsZero() {
		t := time.NewTimer(time.Until(ws.caller.Expires))
		defer t.Stop()
		expired = t.C
	}
	// final writes a last message; the stream ends after it.
	final := func(r *kv.WatchResponse) {
		sb := getStreamBuffer()
		sb.out, sb.scratch, _ = enc.response(sb.out, sb.scratch, r)
		sink.send(sb.out)
		putStreamBuffer(sb)
	}
	for {
		// The buffers are taken only to write: an idle stream holds none.
		var sb *streamBuffer
		select {
		case <-sink.gone():
			return
		case <-h.streams.stop:
			final(&kv.WatchResponse{Canceled: true, CancelReason: "shutting down"})
			return
		case <-keepAlive.C:
			sb = getStreamBuffer()
			sb.out = enc.keepAlive(sb.out)
		case <-expired:
			final(&kv.WatchResponse{Canceled: true, CancelReason: reasonTokenExpired})
			return
		case <-ws.authChanged:
			// Users, roles or the enabled flag changed: end the stream if
			// its token is no longer good or its caller may no longer
			// read it.
			ws.authChanged = ws.auth.Changed()
			if err := ws.auth.Recheck(ws.caller, ws.access); err != nil {
				final(&kv.WatchResponse{Canceled: true, CancelReason: streamEndReason(err)})
				return
			}
			continue
		case <-ws.stream.Ready():
			// Take everything ready, then write it at once: a burst goes
			// out in few writes, a lone event at once. The store wakes a
			// reader once a commit's revisions are all queued, so one
			// write carries the whole commit. (Yielding first, to let
			// later commits join, saved nothing more once it did, and
			// cost every lone event a second pass through the
			// scheduler: docs/performance.md.) One take per write: what
			// it holds counts against the watcher's byte bound until the
			// write is done and released, so a client that stops reading
			// holds at most that bound here.
			sb = getStreamBuffer()
			ok, ended, wrote := writeResponses(sink, enc, sb, ws.stream.Next())
			if !ok || ended {
				putStreamBuffer(sb)
				return
			}
			if wrote || len(sb.out) > 0 {
				resetKeepAlive()
			}
			if len(sb.out) == 0 {
				putStreamBuffer(sb)
				ws.stream.Release()
				continue
			}
		}
		ok := sink.send(sb.out)
		putStreamBuffer(sb)
		ws.stream.Release()
		if !ok {
			return
		}
	}
}

// streamChunk is how much of a take a stream encodes before it writes: a
// watcher catching up takes a page of history at a time (up to the
// watcher's bound, a MiB or more of JSON), and encoding it whole grew
// the buffer by doubling, copying it over and over, and left megabytes
// for the collector to clear and the runtime to hand back to the
// system. Written in chunks, the buffer stays a pooled one and the
// client starts reading at once.
const streamChunk = 32 << 10

// writeResponses encodes rs into sb, sending every streamChunk bytes,
// and leaves what remains unsent in sb.out. ok is false when the client
// is gone; ended, when a final response was met: it is sent, with all
// before it, and the stream ends. wrote reports whether anything was
// sent.
func writeResponses(sink streamSink, enc streamEncoder, sb *streamBuffer, rs []kv.WatchResponse) (ok, ended, wrote bool) {
	flush := func() bool {
		if len(sb.out) < streamChunk {
			return true
		}
		wrote = true
		ok := sink.send(sb.out)
		sb.out = sb.out[:0]
		return ok
	}
	for i := range rs {
		r := &rs[i]
		if r.CompactRevision != 0 || r.Canceled || r.Progress || len(r.Events) == 0 {
			sb.out, sb.scratch, ended = enc.response(sb.out, sb.scratch, r)
			if ended {
				return sink.send(sb.out), true, true
			}
			if !flush() {
				return false, false, true
			}
			continue
		}
		// Events: a chunk may end after any revision's message, so that
		// a response of many stays within one chunk's buffer.
		for evs := r.Events; len(evs) > 0; {
			rev, n := revisionSpan(evs)
			switch {
			case revisionBytes(evs[:n]) > largeRevision:
				// Sent as it is encoded: see stream_large.go.
				c := chunkWriter{sink: sink, sb: sb, ok: true}
				ok := c.writeLargeEvents(enc, rev, evs[:n])
				wrote = wrote || c.sent
				if !ok {
					return false, false, true
				}
			case n == len(r.Events):
				sb.out = enc.sharedEvents(sb.out, rev, evs)
			default:
				sb.out = enc.events(sb.out, rev, evs[:n])
			}
			evs = evs[n:]
			if !flush() {
				return false, false, true
			}
		}
	}
	return true, false, wrote
}

// Close ends every open watch stream with a canceled message ("shutting
// down") and waits for them all, those that took their connection over
// included, then drops the streams of many watchers. New watches answer
// 503 from then on. It is safe to call more
// than once, and after Shutdown.
func (h *Handler) Close() {
	h.streams.beginClose()
	_ = h.streams.wait(context.Background())
	h.wstreams.close()
	h.stopHangups()
}

// Shutdown is Close with a grace period: it waits for the streams until
// ctx is done, then closes the HTTP/1 connections streams took over, so
// that they end whatever their clients do, and returns ctx's error. A
// stream over HTTP/2 still sending then is cut by closing the server
// (http.Server.Close), after which Close returns promptly.
func (h *Handler) Shutdown(ctx context.Context) error {
	h.streams.beginClose()
	err := h.streams.wait(ctx)
	h.wstreams.close()
	h.stopHangups()
	return err
}

// takenHangups returns the hangups of the connections streams take over,
// started with the first; nil where there are none (not Linux), and the
// streams read for themselves.
func (h *Handler) takenHangups() *hangups {
	h.hangupsMu.Lock()
	defer h.hangupsMu.Unlock()
	if h.hangups == nil && !h.hangupsTried {
		h.hangupsTried = true
		hs, err := newHangups()
		if err != nil {
			h.cfg.Logger.Debug().Err(err).Msg("streams watch their own connections")
		} else {
			h.hangups = hs
		}
	}
	return h.hangups
}

// stopHangups stops the hangups, if started; streams still open after a
// Shutdown's grace then notice their client leaving only when a write
// fails, which the closed connection makes it do.
func (h *Handler) stopHangups() {
	h.hangupsMu.Lock()
	defer h.hangupsMu.Unlock()
	if h.hangups != nil {
		h.hangups.stop()
	}
}
