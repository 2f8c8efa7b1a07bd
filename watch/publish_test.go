package watch

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/httpkv/httpkv/kv"
)

// memHistory is a History kept in memory, as a gateway keeps a window of
// its cluster's recent revisions: revisions need not be contiguous (most
// of a cluster's revisions touch other namespaces) and the window starts
// at a compact revision.
type memHistory struct {
	mu      sync.Mutex
	changes []kv.Changes
	compact int64
}

func (h *memHistory) add(ch kv.Changes) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.changes = append(h.changes, ch)
}

func (h *memHistory) ReadHistory(from, to int64, fn func(kv.Event) bool) (int64, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	from = max(from, h.compact)
	for _, ch := range h.changes {
		if ch.Revision < from || ch.Revision > to {
			continue
		}
		for _, ev := range ch.Events {
			if !fn(ev) {
				return h.compact, nil
			}
		}
	}
	return h.compact, nil
}

func (h *memHistory) FillPrevKVs(events []*kv.Event) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, ev := range events {
		if ev.KV.ModRevision-1 < h.compact {
			return i, &kv.CompactedError{CompactRevision: h.compact}
		}
		for _, ch := range h.changes {
			if ch.Revision >= ev.KV.ModRevision {
				break
			}
			for _, old := range ch.Events {
				if string(old.KV.Key) != string(ev.KV.Key) {
					continue
				}
				if old.Type == kv.EventDelete {
					ev.PrevKV = nil
				} else {
					prev := old.KV
					ev.PrevKV = &prev
				}
			}
		}
	}
	return len(events), nil
}

func putAt(rev int64, key, value string) kv.Changes {
	return kv.Changes{Revision: rev, Events: []kv.Event{{Type: kv.EventPut, KV: kv.KeyValue{
		Key: []byte(key), Value: []byte(value), CreateRevision: rev, ModRevision: rev, Version: 1,
	}}}}
}

// recvEvents reads a stream until it has n events or ends.
func recvEvents(tb testing.TB, st *Stream, n int) ([]string, []kv.WatchResponse) {
	tb.Helper()
	var got []string
	var rs []kv.WatchResponse
	deadline := time.After(recvTimeout)
	for len(got) < n {
		select {
		case <-st.Ready():
		case <-deadline:
			tb.Fatalf("got %q, want %d events", got, n)
		}
		for _, r := range st.Next() {
			rs = append(rs, r)
			if r.Canceled || r.CompactRevision != 0 {
				return got, rs
			}
			for _, ev := range r.Events {
				s := fmt.Sprintf("%s=%s@%d", ev.KV.Key, ev.KV.Value, ev.KV.ModRevision)
				if ev.PrevKV != nil {
					s += fmt.Sprintf(" was %s", ev.PrevKV.Value)
				}
				got = append(got, s)
			}
		}
	}
	return got, rs
}

// TestPublishedRevisionsWithGaps drives the scheduler with no store
// behind it: revisions published with gaps between them and one without
// events (a progress notification) reach watchers from now, and a watcher
// from the past is caught up from the History, then follows what is
// published, without a gap or a duplicate.
func TestPublishedRevisionsWithGaps(t *testing.T) {
	h := &memHistory{compact: 10}
	s := New(h, 10, Options{})
	defer s.Close()
	live := mustWatch(t, s, kv.WatchRequest{Key: []byte("k"), End: []byte{0}, PrevKV: true})
	if live.Revision() != 10 || live.StartRevision() != 11 {
		t.Fatalf("a watch from now at revision 10: Revision %d, StartRevision %d, want 10 and 11", live.Revision(), live.StartRevision())
	}
	for _, ch := range []kv.Changes{putAt(12, "k1", "a"), putAt(15, "k2", "b"), putAt(20, "k1", "c")} {
		h.add(ch)
		s.Publish([]kv.Changes{ch})
	}
	s.Publish([]kv.Changes{{Revision: 25}}) // progress: nothing in the namespace
	if got, _ := recvEvents(t, live, 3); fmt.Sprint(got) != "[k1=a@12 k2=b@15 k1=c@20 was a]" {
		t.Fatalf("watch from now got %q", got)
	}
	if got := s.rev(); got != 25 {
		t.Fatalf("revision after a progress publish = %d, want 25", got)
	}
	// Revisions at or below the scheduler's are not delivered again.
	s.Publish([]kv.Changes{putAt(20, "k1", "dup")})

	past := mustWatch(t, s, kv.WatchRequest{Key: []byte("k1"), StartRevision: 11})
	ch := putAt(30, "k1", "d")
	h.add(ch)
	s.Publish([]kv.Changes{ch})
	if got, _ := recvEvents(t, past, 3); fmt.Sprint(got) != "[k1=a@12 k1=c@20 k1=d@30]" {
		t.Fatalf("watch from 11 got %q", got)
	}

	// Below the window's compact revision the history is gone.
	gone := mustWatch(t, s, kv.WatchRequest{Key: []byte("k1"), StartRevision: 5})
	_, rs := recvEvents(t, gone, 1)
	if len(rs) == 0 || rs[len(rs)-1].CompactRevision != 10 {
		t.Fatalf("watch from 5 below the compact revision 10 ended with %+v, want compacted at 10", rs)
	}
}
