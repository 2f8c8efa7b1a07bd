package watch

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/httpkv/httpkv/kv"
)

const largeValue = 100 << 10

// putLarge writes n puts of largeValue bytes under "big/", each its own
// revision, and returns the last revision.
func putLarge(tb testing.TB, s *testStore, h *history, n int) int64 {
	tb.Helper()
	value := string(bytes.Repeat([]byte{'v'}, largeValue))
	var rev int64
	for i := range n {
		rev = h.put(tb, s, fmt.Sprintf("big/%03d", i), value)
	}
	return rev
}

// TestStalledWatcherBoundedInBytes stalls a reader as an HTTP stream does
// when its client stops reading: it has taken a response and is blocked
// writing it, and takes nothing more. Meanwhile 200 puts of 100 KiB are
// written. What the store holds for the watcher (queued, held by the
// reader, held as a victim) stays within its byte bound, about 1 MiB, not
// 200 revisions; once the reader goes on it gets every event, in order.
func TestStalledWatcherBoundedInBytes(t *testing.T) {
	s := newTestStore(t, Options{})
	h := newHistory()
	st := mustWatch(t, s, kv.WatchRequest{Key: []byte("big/"), End: []byte("big0")})
	const n = 200
	putLarge(t, s, h, 1)
	if rs := recvUntil(t, st, recvTimeout, func(kv.WatchResponse) bool { return true }); len(rs) != 1 {
		t.Fatalf("first response = %v, want one", fmtResponses(rs))
	}
	// The reader holds that response and stalls.
	var most int64
	for range n - 1 {
		putLarge(t, s, h, 1)
		stats := s.Stats()
		most = max(most, stats.PendingBytes)
		if held := stats.PendingEvents * largeValue; held > 2*DefaultQueueBytes {
			t.Fatalf("the stalled watcher holds %d events (%d bytes of values), want at most about %d bytes", stats.PendingEvents, held, DefaultQueueBytes)
		}
	}
	t.Logf("a stalled watcher held at most %d bytes over %d puts of %d bytes", most, n, largeValue)
	// The bound, and one revision past it that an empty queue takes.
	if limit := int64(DefaultQueueBytes + largeValue + 1024); most > limit || most == 0 {
		t.Fatalf("Stats().PendingBytes reached %d, want between 1 and %d", most, limit)
	}
	// The reader goes on: every later event arrives, in order, replayed
	// from history where the store held nothing.
	// Revision 2 was the first put, taken before the stall.
	for next := int64(3); next <= int64(n)+1; {
		rs := recvUntil(t, st, recvTimeout, func(kv.WatchResponse) bool { return true })
		for _, r := range rs {
			for _, ev := range r.Events {
				if ev.KV.ModRevision != next || len(ev.KV.Value) != largeValue {
					t.Fatalf("got %s, want the put at revision %d", fmtEvent(ev), next)
				}
				next++
			}
		}
	}
	st.Close()
	if p := s.Stats(); p.PendingBytes != 0 || p.PendingEvents != 0 {
		t.Fatalf("stats after the watcher closed = %+v, want nothing pending", p)
	}
}

// TestStalledWatcherEndsCompacted stalls a reader, writes past its byte
// bound, and compacts the history it has not received: when the reader
// goes on it gets what the store held for it and then a compacted
// response, instead of the store holding every revision for it.
func TestStalledWatcherEndsCompacted(t *testing.T) {
	s := newTestStore(t, Options{})
	h := newHistory()
	start := s.KV().Rev() + 1
	st := mustWatch(t, s, kv.WatchRequest{Key: []byte("big/"), End: []byte("big0")})
	last := putLarge(t, s, h, 100)
	if _, err := s.KV().Compact(last); err != nil {
		t.Fatalf("Compact(%d) = %v", last, err)
	}
	rs := recvUntil(t, st, recvTimeout, isFinal)
	end := rs[len(rs)-1]
	if end.CompactRevision != last {
		t.Fatalf("the stalled watcher ended with %s, want compacted at %d", fmtResponse(end), last)
	}
	got := int64(0)
	for _, r := range rs[:len(rs)-1] {
		for _, ev := range r.Events {
			if ev.KV.ModRevision != start+got {
				t.Fatalf("event %s, want revision %d", fmtEvent(ev), start+got)
			}
			got++
		}
	}
	if max := int64(DefaultQueueBytes/largeValue + 2); got > max {
		t.Fatalf("the watcher received %d revisions before compacted, want at most %d: the store held them all", got, max)
	}
	t.Logf("received %d of 100 revisions, then %s", got, fmtResponse(end))
}
