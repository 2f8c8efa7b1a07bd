package httpapi

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/httpkv/httpkv/kv"

	"github.com/httpkv/httpkv/wire"
)

// testEvents returns n events over revisions from rev, two to a revision,
// with keys and values that need escaping or base64, deletes and
// previous versions among them.
func testEvents(rev int64, n int) []kv.Event {
	evs := make([]kv.Event, n)
	for i := range evs {
		ev := kv.Event{Type: kv.EventPut, KV: kv.KeyValue{
			Key: []byte(fmt.Sprintf("k/%d\"\n", i)), Value: bytes.Repeat([]byte{'v'}, 100),
			CreateRevision: rev, ModRevision: rev + int64(i/2), Version: int64(i + 1), Lease: int64(i % 3),
		}}
		switch i % 5 {
		case 1:
			ev.Type, ev.KV.Value = kv.EventDelete, nil
		case 2:
			ev.KV.Value = []byte{0xff, 0xfe, 0}
		case 3:
			ev.PrevKV = &kv.KeyValue{Key: ev.KV.Key, Value: []byte("before"), ModRevision: rev - 1}
		}
		evs[i] = ev
	}
	return evs
}

// TestStreamEncoderEventsInPlace checks that a revision's message, written
// in place, is exactly what framing its payload gives, in both forms.
func TestStreamEncoderEventsInPlace(t *testing.T) {
	evs := testEvents(7, 6)
	for _, enc := range []streamEncoder{{}, {ndjson: true}} {
		for len(evs) > 0 {
			rev, n := revisionSpan(evs)
			payload := append(wire.AppendEventsField(wire.AppendHeader(nil, rev), evs[:n]), '}')
			want := enc.frame([]byte("before"), "", rev, payload)
			if got := enc.events([]byte("before"), rev, evs[:n]); !bytes.Equal(got, want) {
				t.Fatalf("ndjson=%v: events wrote\n%s\nwant\n%s", enc.ndjson, got, want)
			}
			evs = evs[n:]
		}
	}
}

// recordSink records what a stream sends; it fails after failAfter sends
// when that is positive.
type recordSink struct {
	sends     [][]byte
	failAfter int
}

func (s *recordSink) send(b []byte) bool {
	if s.failAfter > 0 && len(s.sends) == s.failAfter {
		return false
	}
	s.sends = append(s.sends, bytes.Clone(b))
	return true
}
func (s *recordSink) gone() <-chan struct{} { return nil }
func (s *recordSink) close()                {}
func (s *recordSink) cut()                  {}

// TestWriteResponsesInChunks writes a take of many responses, as a
// watcher catching up gets: it goes out in writes of about streamChunk,
// each ending on a message's end, together exactly the encoding of the
// whole take; a final response goes out with what precedes it and ends
// the stream; a failed write stops it.
func TestWriteResponsesInChunks(t *testing.T) {
	evs := testEvents(2, 2000)
	var rs []kv.WatchResponse
	for len(evs) > 0 {
		n := min(len(evs), 256)
		rs = append(rs, kv.WatchResponse{Revision: evs[n-1].KV.ModRevision, Events: evs[:n]})
		evs = evs[n:]
	}
	rs = append(rs, kv.WatchResponse{Revision: 5000, Progress: true})
	for _, enc := range []streamEncoder{{}, {ndjson: true}} {
		var want []byte
		for i := range rs {
			want, _, _ = enc.response(want, nil, &rs[i])
		}
		sink := &recordSink{}
		sb := &streamBuffer{}
		ok, ended, wrote := writeResponses(sink, enc, sb, rs)
		if !ok || ended || !wrote {
			t.Fatalf("ndjson=%v: writeResponses = %v, %v, %v; want ok, not ended, wrote", enc.ndjson, ok, ended, wrote)
		}
		sent := bytes.Join(append(sink.sends, sb.out), nil)
		if !bytes.Equal(sent, want) {
			t.Fatalf("ndjson=%v: sent %d bytes differing from the take's %d", enc.ndjson, len(sent), len(want))
		}
		if len(sink.sends) < len(want)/streamChunk-1 {
			t.Fatalf("ndjson=%v: %d writes for %d bytes, want about one per %d", enc.ndjson, len(sink.sends), len(want), streamChunk)
		}
		end := "\n\n"
		if enc.ndjson {
			end = "}\n"
		}
		for i, b := range sink.sends {
			if len(b) < streamChunk || len(b) > streamChunk+2048 || !strings.HasSuffix(string(b), end) {
				t.Fatalf("ndjson=%v: write %d of %d bytes, want one of about %d ending a message", enc.ndjson, i, len(b), streamChunk)
			}
		}
		if cap(sb.out) > maxPooledStreamBuffer {
			t.Fatalf("ndjson=%v: the buffer grew to %d, past what the pool keeps (%d)", enc.ndjson, cap(sb.out), maxPooledStreamBuffer)
		}
	}

	// A final response: everything before it and it, then the end.
	final := append(rs[:len(rs)-1:len(rs)-1], kv.WatchResponse{Revision: 6000, CompactRevision: 10})
	sink := &recordSink{}
	ok, ended, _ := writeResponses(sink, streamEncoder{}, &streamBuffer{}, final)
	if !ok || !ended || !strings.Contains(string(sink.sends[len(sink.sends)-1]), "event: compacted") {
		t.Fatalf("with a final response: ok %v, ended %v; want both, the compacted message last", ok, ended)
	}
	// A client gone mid-take.
	sink = &recordSink{failAfter: 2}
	if ok, _, _ := writeResponses(sink, streamEncoder{}, &streamBuffer{}, rs); ok || len(sink.sends) != 2 {
		t.Fatalf("a failing sink: ok %v after %d writes, want false after 2", ok, len(sink.sends))
	}
}

// TestSharedEventsByIdentity checks that a revision's message is shared
// only by streams given the very same events: one watcher's own copy
// (with previous versions filled in) of the same revision gets its own
// message, and so does the other form.
func TestSharedEventsByIdentity(t *testing.T) {
	shared := testEvents(900001, 1)
	own := testEvents(900001, 1)
	own[0].PrevKV = &kv.KeyValue{Key: own[0].KV.Key, Value: []byte("mine")}
	for _, enc := range []streamEncoder{{}, {ndjson: true}} {
		for _, evs := range [][]kv.Event{shared, own, shared} {
			want := enc.events(nil, 900001, evs)
			for range 2 { // encoded, then found
				if got := enc.sharedEvents([]byte{}, 900001, evs); !bytes.Equal(got, want) {
					t.Fatalf("ndjson=%v: sharedEvents wrote\n%s\nwant\n%s", enc.ndjson, got, want)
				}
			}
		}
	}
	if c := recentEncoded[900001%len(recentEncoded)].Load(); c == nil || c.first != &shared[0] {
		t.Fatalf("the last message encoded was not kept for other streams")
	}
}

// deadlineConn records the write deadlines set on it.
type deadlineConn struct {
	net.Conn
	set []time.Time
}

func (c *deadlineConn) SetWriteDeadline(t time.Time) error {
	c.set = append(c.set, t)
	return nil
}
func (c *deadlineConn) Write(b []byte) (int, error) { return len(b), nil }

// TestConnSinkDeadlineSlack checks that a stream's sends keep a write
// deadline of about the write timeout ahead, moving it only once it is
// deadlineSlack stale rather than on every send.
func TestConnSinkDeadlineSlack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &deadlineConn{}
		s := &connSink{conn: c, deadlineSet: time.Now(), timeout: DefaultWriteTimeout}
		for range 100 { // a burst: the deadline set at the head holds
			if !s.send([]byte("x")) {
				t.Fatal("send failed")
			}
		}
		if len(c.set) != 0 {
			t.Fatalf("a burst within %s set the deadline %d times, want none", deadlineSlack, len(c.set))
		}
		time.Sleep(deadlineSlack)
		s.send([]byte("x"))
		s.send([]byte("x"))
		if len(c.set) != 1 || !c.set[0].Equal(time.Now().Add(DefaultWriteTimeout)) {
			t.Fatalf("after %s: deadlines set %v, want one, %s from now", deadlineSlack, c.set, DefaultWriteTimeout)
		}
	})
}

// slowReaderConn is the server's end of a connection whose client takes
// perRead bytes every interval, or nothing when perRead is zero; a write
// fails with os.ErrDeadlineExceeded once the deadline set on it passes.
type slowReaderConn struct {
	net.Conn
	perRead  int
	interval time.Duration
	deadline time.Time
	taken    int
}

func (c *slowReaderConn) SetWriteDeadline(t time.Time) error {
	c.deadline = t
	return nil
}

func (c *slowReaderConn) Write(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		if !c.deadline.IsZero() && !time.Now().Before(c.deadline) {
			return n, os.ErrDeadlineExceeded
		}
		if c.perRead == 0 {
			time.Sleep(time.Until(c.deadline))
			continue
		}
		time.Sleep(c.interval)
		m := min(c.perRead, len(b)-n)
		n += m
		c.taken += m
	}
	return n, nil
}

// TestConnSinkSlowReader: a client that reads a large message slowly, but
// steadily, gets all of it, however long the whole message takes; one
// that reads nothing is cut off after the write timeout.
func TestConnSinkSlowReader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const timeout = 30 * time.Second
		msg := make([]byte, 1<<20)
		// 16 KiB every 5 s: 1 MiB takes 320 s, each 64 KiB 20 s.
		c := &slowReaderConn{perRead: 16 << 10, interval: 5 * time.Second}
		s := &connSink{conn: c, deadlineSet: time.Now(), timeout: timeout}
		_ = c.SetWriteDeadline(time.Now().Add(timeout))
		start := time.Now()
		if !s.send(msg) || c.taken != len(msg) {
			t.Fatalf("a reader taking 16 KiB every 5 s was cut off after %s, having taken %d of %d bytes", time.Since(start), c.taken, len(msg))
		}

		stalled := &slowReaderConn{}
		s = &connSink{conn: stalled, deadlineSet: time.Now(), timeout: timeout}
		_ = stalled.SetWriteDeadline(time.Now().Add(timeout))
		start = time.Now()
		if s.send(msg) {
			t.Fatal("a reader that takes nothing got the message")
		}
		if d := time.Since(start); d != timeout {
			t.Fatalf("a reader that takes nothing was cut off after %s, want %s", d, timeout)
		}
	})
}
