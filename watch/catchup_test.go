package watch

import (
	"fmt"
	"testing"
	"time"

	"github.com/httpkv/httpkv/kv"
)

// TestCatchUpReadsAheadOfReader opens a watcher far behind and has its
// reader take one page and hold it, as an HTTP stream does while it
// writes that page out. The sync loop reads and queues the next page
// meanwhile (pages are half the watcher's bound), so that writing and
// reading the history overlap; what the store holds for the watcher,
// taken and queued, stays within the bound; and every revision arrives
// once, in order.
func TestCatchUpReadsAheadOfReader(t *testing.T) {
	const limit, n = 64, 1000
	s := newTestStore(t, Options{QueueLimit: limit})
	h := newHistory()
	first := h.put(t, s, "c/0", "v")
	for i := 1; i < n; i++ {
		h.put(t, s, fmt.Sprintf("c/%d", i), "v")
	}
	// The first pass stops after its first send until the reader has
	// taken what it sent.
	sent, goOn := make(chan struct{}), make(chan struct{})
	calls := 0
	s.hooks.afterSend = func() {
		if calls++; calls == 1 {
			close(sent)
			<-goOn
		}
	}
	st := mustWatch(t, s, kv.WatchRequest{Key: []byte("c/"), End: []byte("c0"), StartRevision: first})
	next := first
	check := func(rs []kv.WatchResponse) {
		t.Helper()
		for _, r := range rs {
			for _, ev := range r.Events {
				if ev.KV.ModRevision != next {
					t.Fatalf("got %s, want the put at revision %d", fmtEvent(ev), next)
				}
				next++
			}
		}
	}
	select {
	case <-sent:
	case <-time.After(recvTimeout):
		t.Fatalf("the watcher far behind was not served")
	}
	rs := st.Next()
	taken := 0
	for _, r := range rs {
		taken += len(r.Events)
	}
	if taken == 0 || taken > limit/2 {
		t.Fatalf("first page holds %d events, want 1 to %d (half the bound)", taken, limit/2)
	}
	check(rs)
	close(goOn)
	// The reader holds its page, unreleased: the next one is queued
	// meanwhile, within the bound.
	// (Ready may still hold the first page's signal.)
	deadline := time.After(recvTimeout)
	for st.w.empty() {
		select {
		case <-st.Ready():
		case <-deadline:
			t.Fatalf("no page queued while the reader held the first")
		}
	}
	if p := s.Stats(); p.PendingEvents > limit {
		t.Fatalf("the store holds %d events for the watcher, want at most its bound %d", p.PendingEvents, limit)
	}
	for next <= first+n-1 {
		check(recvUntil(t, st, recvTimeout, func(kv.WatchResponse) bool { return true }))
	}
	st.Close()
}

// TestPageBounds checks page: at most half the bound, at most the room,
// never zero.
func TestPageBounds(t *testing.T) {
	lim := limits{events: 4096, bytes: 1 << 20, total: 1 << 30}
	one := limits{events: 1, bytes: 1}
	for _, c := range []struct{ room, want limits }{
		{lim, limits{events: 2048, bytes: 1 << 19}},
		{limits{events: 100, bytes: 1 << 20}, limits{events: 100, bytes: 1 << 19}},
		{limits{events: 4096, bytes: 1000}, limits{events: 2048, bytes: 1000}},
		{limits{}, one},
	} {
		if got := c.room.page(lim); got != c.want {
			t.Errorf("%+v.page(%+v) = %+v, want %+v", c.room, lim, got, c.want)
		}
	}
	if got := one.page(limits{events: 1, bytes: 1, total: 1}); got != one {
		t.Errorf("page of a bound of one = %+v, want one event and byte", got)
	}
}
