package stream

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

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
	for _, enc := range []Encoder{{}, {NDJSON: true}} {
		for len(evs) > 0 {
			rev, n := RevisionSpan(evs)
			payload := append(wire.AppendEventsField(wire.AppendHeader(nil, rev), evs[:n]), '}')
			want := enc.Frame([]byte("before"), "", rev, payload)
			if got := enc.Events([]byte("before"), rev, evs[:n]); !bytes.Equal(got, want) {
				t.Fatalf("ndjson=%v: events wrote\n%s\nwant\n%s", enc.NDJSON, got, want)
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

func (s *recordSink) Send(b []byte) bool {
	if s.failAfter > 0 && len(s.sends) == s.failAfter {
		return false
	}
	s.sends = append(s.sends, bytes.Clone(b))
	return true
}
func (s *recordSink) Gone() <-chan struct{} { return nil }
func (s *recordSink) Close()                {}
func (s *recordSink) Cut()                  {}

// TestWriteResponsesInChunks writes a take of many responses, as a
// watcher catching up gets: it goes out in writes of about Chunk,
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
	for _, enc := range []Encoder{{}, {NDJSON: true}} {
		var want []byte
		for i := range rs {
			want, _, _ = enc.Response(want, nil, &rs[i])
		}
		sink := &recordSink{}
		sb := &Buffer{}
		ok, ended, wrote := WriteResponses(sink, enc, sb, rs)
		if !ok || ended || !wrote {
			t.Fatalf("ndjson=%v: WriteResponses = %v, %v, %v; want ok, not ended, wrote", enc.NDJSON, ok, ended, wrote)
		}
		sent := bytes.Join(append(sink.sends, sb.Out), nil)
		if !bytes.Equal(sent, want) {
			t.Fatalf("ndjson=%v: sent %d bytes differing from the take's %d", enc.NDJSON, len(sent), len(want))
		}
		if len(sink.sends) < len(want)/Chunk-1 {
			t.Fatalf("ndjson=%v: %d writes for %d bytes, want about one per %d", enc.NDJSON, len(sink.sends), len(want), Chunk)
		}
		end := "\n\n"
		if enc.NDJSON {
			end = "}\n"
		}
		for i, b := range sink.sends {
			if len(b) < Chunk || len(b) > Chunk+2048 || !strings.HasSuffix(string(b), end) {
				t.Fatalf("ndjson=%v: write %d of %d bytes, want one of about %d ending a message", enc.NDJSON, i, len(b), Chunk)
			}
		}
		if cap(sb.Out) > MaxPooledBuffer {
			t.Fatalf("ndjson=%v: the buffer grew to %d, past what the pool keeps (%d)", enc.NDJSON, cap(sb.Out), MaxPooledBuffer)
		}
	}

	// A final response: everything before it and it, then the end.
	final := append(rs[:len(rs)-1:len(rs)-1], kv.WatchResponse{Revision: 6000, CompactRevision: 10})
	sink := &recordSink{}
	ok, ended, _ := WriteResponses(sink, Encoder{}, &Buffer{}, final)
	if !ok || !ended || !strings.Contains(string(sink.sends[len(sink.sends)-1]), "event: compacted") {
		t.Fatalf("with a final response: ok %v, ended %v; want both, the compacted message last", ok, ended)
	}
	// A client gone mid-take.
	sink = &recordSink{failAfter: 2}
	if ok, _, _ := WriteResponses(sink, Encoder{}, &Buffer{}, rs); ok || len(sink.sends) != 2 {
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
	for _, enc := range []Encoder{{}, {NDJSON: true}} {
		for _, evs := range [][]kv.Event{shared, own, shared} {
			want := enc.Events(nil, 900001, evs)
			for range 2 { // encoded, then found
				if got := enc.SharedEvents([]byte{}, 900001, evs); !bytes.Equal(got, want) {
					t.Fatalf("ndjson=%v: sharedEvents wrote\n%s\nwant\n%s", enc.NDJSON, got, want)
				}
			}
		}
	}
	if c := recentEncoded[900001%len(recentEncoded)].Load(); c == nil || c.first != &shared[0] {
		t.Fatalf("the last message encoded was not kept for other streams")
	}
}
