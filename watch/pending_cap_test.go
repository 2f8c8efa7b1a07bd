package watch

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/httpkv/httpkv/kv"
)

// TestMaxPendingBytes stalls the readers of several watchers, each far
// within its own byte bound, while revisions are written past the
// store's bound for all of them (MaxPendingBytes). What the store holds
// stays within that bound (the watchers share each revision's value,
// counted once); the rest goes to catching up from history. Once the
// readers read, each gets every revision once, in order: what the
// others, still stalled, were queued is given back to make room.
func TestMaxPendingBytes(t *testing.T) {
	const (
		watchers = 8
		puts     = 200
		value    = 1 << 10
		total    = 16 << 10 // about 14 revisions, for all watchers together
	)
	s := newTestStore(t, Options{MaxPendingBytes: total})
	h := newHistory()
	streams := make([]*Stream, watchers)
	for i := range streams {
		streams[i] = mustWatch(t, s, kv.WatchRequest{Key: []byte("p/"), End: []byte("p0")})
	}
	start := streams[0].StartRevision()
	v := strings.Repeat("v", value)
	limit := int64(total)
	var most int64
	for i := range puts {
		h.put(t, s, fmt.Sprintf("p/%03d", i), v)
		st := s.Stats()
		most = max(most, st.PendingBytes)
		if st.PendingBytes > limit {
			t.Fatalf("after %d puts Stats() = %+v: PendingBytes past MaxPendingBytes %d", i+1, st, total)
		}
	}
	st := s.Stats()
	t.Logf("%d stalled watchers, %d puts of %d bytes: the store held at most %d bytes (bound %d); now %+v", watchers, puts, value, most, total, st)
	if st.Unsynced+st.Victims == 0 {
		t.Fatalf("Stats() = %+v, want watchers moved to catch up from history", st)
	}
	// The readers read: every revision once, in order.
	for i, w := range streams {
		next := start
		for next < start+puts {
			for _, r := range recvUntil(t, w, recvTimeout, func(kv.WatchResponse) bool { return true }) {
				for _, ev := range r.Events {
					if ev.KV.ModRevision != next || len(ev.KV.Value) != value {
						t.Fatalf("watcher %d: got %s, want the put at revision %d", i, fmtEvent(ev), next)
					}
					next++
				}
			}
		}
		if rs := w.Next(); len(rs) != 0 {
			t.Fatalf("watcher %d: after every revision, Next() = %v, want nothing", i, fmtResponses(rs))
		}
	}
	for _, w := range streams {
		w.Close()
	}
	if st := s.Stats(); st.PendingBytes != 0 || st.PendingEvents != 0 {
		t.Fatalf("Stats() after every watcher closed = %+v, want nothing pending", st)
	}
}

// TestMaxPendingBytesCatchingUp opens watchers far behind, each from
// another revision, whose readers do not read: the sync loop gives them
// together no more than the store's bound, not a page each. Once the readers
// read, each gets every revision from its start once, in order.
func TestMaxPendingBytesCatchingUp(t *testing.T) {
	const (
		watchers = 8
		puts     = 200
		value    = 1 << 10
		total    = 16 << 10
	)
	s := newTestStore(t, Options{MaxPendingBytes: total})
	h := newHistory()
	v := strings.Repeat("v", value)
	first := h.put(t, s, "p/000", v)
	for i := 1; i < puts; i++ {
		h.put(t, s, fmt.Sprintf("p/%03d", i), v)
	}
	limit := int64(total)
	streams := make([]*Stream, watchers)
	for i := range streams {
		streams[i] = mustWatch(t, s, kv.WatchRequest{Key: []byte("p/"), End: []byte("p0"), StartRevision: first + int64(i)*puts/watchers})
	}
	// Let the sync loop serve them until nothing more fits: at least 50
	// samples, and until it has given them something, however long a
	// loaded machine makes that take.
	var most int64
	deadline := time.Now().Add(recvTimeout)
	for i := 0; i < 50 || most == 0; i++ {
		st := s.Stats()
		most = max(most, st.PendingBytes)
		if st.PendingBytes > limit {
			t.Fatalf("Stats() = %+v: PendingBytes past MaxPendingBytes %d", st, total)
		}
		if most == 0 && time.Now().After(deadline) {
			t.Fatalf("the watchers far behind were given nothing within %v", recvTimeout)
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Logf("%d watchers far behind, not reading: the store held at most %d bytes (bound %d)", watchers, most, total)
	for i, w := range streams {
		next := w.StartRevision()
		for next < first+puts {
			for _, r := range recvUntil(t, w, recvTimeout, func(kv.WatchResponse) bool { return true }) {
				for _, ev := range r.Events {
					if ev.KV.ModRevision != next || len(ev.KV.Value) != value {
						t.Fatalf("watcher %d: got %s, want the put at revision %d", i, fmtEvent(ev), next)
					}
					next++
				}
			}
		}
		w.Close()
	}
}

// TestMaxPendingBytesVictims: a victim's revision counts against the
// store's bound, and comes off it when the victim is delivered or
// canceled, so that Stats().PendingBytes returns to zero.
func TestMaxPendingBytesVictims(t *testing.T) {
	s := newTestStore(t, Options{QueueLimit: 1, VictimInterval: 1 << 40})
	h := newHistory()
	st := mustWatch(t, s, kv.WatchRequest{Key: []byte("p/"), End: []byte("p0")})
	h.put(t, s, "p/1", "v") // queued: the watcher held nothing
	h.put(t, s, "p/2", "v") // past QueueLimit: a victim
	stats := s.Stats()
	if stats.Victims != 1 {
		t.Fatalf("Stats() = %+v, want one victim", stats)
	}
	var ev kv.Event
	ev.KV.Key, ev.KV.Value = []byte("p/1"), []byte("v")
	if want := 2 * eventSize(&ev); stats.PendingBytes != want {
		t.Fatalf("Stats().PendingBytes = %d with one revision queued and one held for the victim, want %d", stats.PendingBytes, want)
	}
	// Delivered: taken, released, then the victim's revision queued,
	// taken and released.
	for range 2 {
		if rs := st.Next(); len(rs) != 1 {
			t.Fatalf("Next() = %v, want one response", fmtResponses(rs))
		}
		st.Release()
		s.retryVictims()
	}
	if stats := s.Stats(); stats.PendingBytes != 0 || stats.Victims != 0 {
		t.Fatalf("Stats() after the victim's revision was read = %+v, want nothing pending", stats)
	}
	// Canceled while a victim.
	h.put(t, s, "p/3", "v")
	h.put(t, s, "p/4", "v")
	if stats := s.Stats(); stats.Victims != 1 {
		t.Fatalf("Stats() = %+v, want one victim", stats)
	}
	st.Close()
	if stats := s.Stats(); stats.PendingBytes != 0 || stats.Victims != 0 {
		t.Fatalf("Stats() after Close = %+v, want nothing pending", stats)
	}
}

// TestMaxPendingBytesOneFarBehind: one watcher far behind, not reading,
// the store holding nothing else. The sync loop gives it a page of at
// most the store's bound, not the bound and one revision more (which the
// store, holding nothing, would admit whole).
func TestMaxPendingBytesOneFarBehind(t *testing.T) {
	const (
		puts  = 50
		value = 1 << 10
		total = 16 << 10 // 14 revisions of 1,157 bytes, and 258 bytes
	)
	s := newTestStore(t, Options{MaxPendingBytes: total})
	h := newHistory()
	v := strings.Repeat("v", value)
	first := h.put(t, s, "p/000", v)
	for i := 1; i < puts; i++ {
		h.put(t, s, fmt.Sprintf("p/%03d", i), v)
	}
	mustWatch(t, s, kv.WatchRequest{Key: []byte("p/"), End: []byte("p0"), StartRevision: first})
	deadline := time.Now().Add(recvTimeout)
	for s.Stats().PendingEvents == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the watcher far behind was given nothing within %v", recvTimeout)
		}
		time.Sleep(2 * time.Millisecond)
	}
	// The loop fills the watcher's room page by page; let it finish.
	for range 50 {
		if st := s.Stats(); st.PendingBytes > total {
			t.Fatalf("Stats() = %+v: PendingBytes past MaxPendingBytes %d", st, total)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
