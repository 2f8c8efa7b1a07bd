package stream

import (
	"bytes"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/kv"
)

// TestWriteLargeEvents: a revision of large keys and values is sent in
// chunks of at most about Chunk, whose bytes are exactly the
// message events encodes whole: text with escapes and runes of every
// width across piece boundaries, U+2028, values that are not UTF-8
// (base64), previous versions, deletes, SSE and NDJSON.
func TestWriteLargeEvents(t *testing.T) {
	// Text whose runes and escapes straddle every piece boundary.
	var text strings.Builder
	for text.Len() < 12*encodePiece+7 {
		text.WriteString("ab\"c\\d\n\té€😀\u2028\x01")
	}
	binary := bytes.Repeat([]byte{0xff, 0x00, 0xfe, 'x'}, 3*encodePiece+1)
	big := func(key string, value []byte, rev int64) kv.KeyValue {
		return kv.KeyValue{Key: []byte(key), Value: value, CreateRevision: 2, ModRevision: rev, Version: 3, Lease: 7}
	}
	const rev = 42
	prev := big("k/prev", []byte(text.String()), rev-1)
	cases := []struct {
		name string
		evs  []kv.Event
	}{
		{"text", []kv.Event{{Type: kv.EventPut, KV: big("k/a", []byte(text.String()), rev)}}},
		{"binary", []kv.Event{{Type: kv.EventPut, KV: big("k/b", binary, rev)}}},
		{"large key", []kv.Event{{Type: kv.EventPut, KV: big(strings.Repeat("k€", 3*encodePiece), []byte("v"), rev)}}},
		{"txn with prev and delete", []kv.Event{
			{Type: kv.EventPut, KV: big("k/a", []byte(text.String()), rev), PrevKV: &prev},
			{Type: kv.EventDelete, KV: kv.KeyValue{Key: []byte("k/gone"), ModRevision: rev}, PrevKV: &prev},
			{Type: kv.EventPut, KV: big("k/b", binary, rev)},
		}},
	}
	for _, c := range cases {
		for _, enc := range []Encoder{{}, {NDJSON: true}} {
			t.Run(c.name+map[bool]string{false: " sse", true: " ndjson"}[enc.NDJSON], func(t *testing.T) {
				if n := revisionBytes(c.evs); n <= largeRevision {
					t.Fatalf("revisionBytes = %d, want a large revision (over %d)", n, largeRevision)
				}
				want := enc.Events([]byte("before"), rev, c.evs)
				sink := &recordSink{}
				sb := &Buffer{Out: []byte("before")}
				w := chunkWriter{sink: sink, sb: sb, ok: true}
				if !w.writeLargeEvents(enc, rev, c.evs) || !w.sent {
					t.Fatalf("writeLargeEvents = %v, sent %v; want sent and true", w.ok, w.sent)
				}
				var got []byte
				for _, b := range sink.sends {
					if len(b) > Chunk+6*encodePiece+1024 {
						t.Errorf("a send of %d bytes, want at most a chunk and a piece (%d)", len(b), Chunk+6*encodePiece+1024)
					}
					got = append(got, b...)
				}
				got = append(got, sb.Out...)
				if !bytes.Equal(got, want) {
					t.Fatalf("writeLargeEvents sent %d bytes differing from events' %d:\n%.300q\nwant\n%.300q", len(got), len(want), got, want)
				}
			})
		}
	}
	// A failed send stops it.
	sink := &recordSink{failAfter: 1}
	w := chunkWriter{sink: sink, sb: &Buffer{}, ok: true}
	if w.writeLargeEvents(Encoder{}, rev, cases[3].evs) || len(sink.sends) != 1 {
		t.Fatalf("with the second send failing, writeLargeEvents = true or sent %d times, want false after one", len(sink.sends))
	}
}

// TestWriteResponsesLarge: WriteResponses sends a large revision in
// chunks and a small one whole, in order, the same bytes as response.
func TestWriteResponsesLarge(t *testing.T) {
	value := []byte(strings.Repeat("v", 200<<10))
	rs := []kv.WatchResponse{
		{Revision: 5, Events: []kv.Event{{Type: kv.EventPut, KV: kv.KeyValue{Key: []byte("a"), Value: []byte("small"), ModRevision: 4}},
			{Type: kv.EventPut, KV: kv.KeyValue{Key: []byte("b"), Value: value, ModRevision: 5}}}},
		{Revision: 6, Events: []kv.Event{{Type: kv.EventPut, KV: kv.KeyValue{Key: []byte("c"), Value: []byte("small"), ModRevision: 6}}}},
	}
	var want []byte
	for i := range rs {
		want, _, _ = Encoder{}.Response(want, nil, &rs[i])
	}
	sink := &recordSink{}
	sb := &Buffer{}
	ok, ended, wrote := WriteResponses(sink, Encoder{}, sb, rs)
	if !ok || ended || !wrote {
		t.Fatalf("WriteResponses = %v, %v, %v; want true, false, true", ok, ended, wrote)
	}
	var got []byte
	for _, b := range sink.sends {
		if len(b) > 2*Chunk {
			t.Errorf("a send of %d bytes, want chunks", len(b))
		}
		got = append(got, b...)
	}
	got = append(got, sb.Out...)
	if !bytes.Equal(got, want) {
		t.Fatalf("WriteResponses wrote %d bytes differing from response's %d", len(got), len(want))
	}
}
