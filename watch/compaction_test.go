package watch

import (
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/mvcc"
)

const recvTimeout = 10 * time.Second

// TestCompactionDuringSyncPass compacts at each step of a sync pass, with
// watchers behind the compact revision, at it and past it: those behind
// end with a compacted response naming it, after exactly the events they
// got, and the others receive everything, the compact revision's delete
// included.
func TestCompactionDuringSyncPass(t *testing.T) {
	const compactRev = 30
	for _, step := range []string{"after choose", "after read", "after send"} {
		t.Run(step, func(t *testing.T) {
			// A small queue makes catching up take several passes.
			s := newTestStore(t, Options{QueueLimit: 8})
			h := newHistory()
			// Revisions 2..41 write k: puts, and a delete at the compact
			// revision.
			for rev := int64(2); rev <= 41; rev++ {
				if rev == compactRev {
					h.del(t, s, "k", "")
				} else {
					h.put(t, s, "k", "v")
				}
			}
			var once sync.Once
			compact := func() {
				once.Do(func() {
					if err := h.compact(s, compactRev); err != nil {
						t.Errorf("Compact(%d) = %v", compactRev, err)
					}
				})
			}
			// Set before the first Watch, which orders it before every
			// sync pass that calls a hook.
			switch step {
			case "after choose":
				s.hooks.afterChoose = compact
			case "after read":
				s.hooks.afterRead = compact
			case "after send":
				s.hooks.afterSend = compact
			}
			starts := []int64{2, 9, 25, compactRev - 1, compactRev, compactRev + 1, 40}
			streams := make([]*Stream, len(starts))
			for i, start := range starts {
				st, err := s.Watch(kv.WatchRequest{Key: []byte("k"), StartRevision: start})
				if err != nil {
					t.Fatalf("Watch(from %d) = %v", start, err)
				}
				defer st.Close()
				streams[i] = st
			}
			for i, st := range streams {
				got := recvUntil(t, st, recvTimeout, func(r kv.WatchResponse) bool {
					return r.Revision == 41 && len(r.Events) > 0
				})
				ref := h.reference(t)
				if err := ref.check(kv.WatchRequest{Key: []byte("k")}, starts[i], got, checkOptions{}); err != nil {
					t.Errorf("watch from %d: %v", starts[i], err)
				}
				last := got[len(got)-1]
				switch {
				case starts[i] >= compactRev && last.CompactRevision != 0:
					t.Errorf("watch from %d ended %s, want every event to 41", starts[i], fmtResponse(last))
				case starts[i] < compactRev && last.CompactRevision != compactRev:
					// The first pass, the only one before the compaction,
					// reads 8 revisions at most: every watcher behind it
					// is cut off.
					t.Errorf("watch from %d ended %s, want compacted at %d", starts[i], fmtResponse(last), compactRev)
				}
				t.Logf("watch from %d: %v", starts[i], fmtResponses(got))
			}
		})
	}
}

// compactHistory puts a and b, then in one txn deletes a and puts c, then
// puts b and c again. It returns the txn's revision, to compact at.
func compactHistory(tb testing.TB, s *testStore, h *history) int64 {
	tb.Helper()
	h.put(tb, s, "a", "1")
	h.put(tb, s, "b", "1")
	h.put(tb, s, "a", "2")
	ch, err := h.write(s, func(tx *mvcc.WriteTxn) error {
		_, err := tx.Txn(kv.TxnRequest{Success: []kv.Op{
			{Delete: &kv.DeleteRequest{Key: []byte("a")}},
			{Put: &kv.PutRequest{Key: []byte("c"), Value: []byte("1")}},
		}})
		return err
	})
	if err != nil {
		tb.Fatalf("Txn(delete a, put c) = %v", err)
	}
	h.put(tb, s, "b", "2")
	h.put(tb, s, "c", "2")
	return ch.Revision
}

// TestWatchAtCompactRevision starts watchers at the compact revision, whose
// events (a delete among them) are still history, and one revision below
// it, which is gone; also after a restart that may have cut the
// compaction short.
func TestWatchAtCompactRevision(t *testing.T) {
	all := kv.WatchRequest{Key: []byte("a"), End: []byte{0}}
	for _, tc := range []struct {
		name string
		// reopen closes the store right after compacting, before the
		// history is removed, and opens it again.
		reopen, wait bool
	}{
		{name: "compacted", wait: true},
		{name: "reopened", reopen: true, wait: true},
		{name: "cut short", reopen: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "db")
			// Deleting one revision per commit makes the removal slow
			// enough for Close to cut it short.
			kvOpts := mvcc.Options{NoFsync: true, CompactionBatchLimit: 1}
			kval, err := mvcc.Open(path, nil, nil, kvOpts)
			if err != nil {
				t.Fatal(err)
			}
			s := observe(t, kval, Options{})
			h := newHistory()
			// Plenty of history below the compact revision to remove.
			for range 200 {
				h.put(t, s, "filler", "x")
			}
			compactRev := compactHistory(t, s, h)
			done, err := kval.Compact(compactRev)
			if err != nil {
				t.Fatalf("Compact(%d) = %v", compactRev, err)
			}
			h.compacts[compactRev] = true
			if tc.wait {
				if err := <-done; err != nil {
					t.Fatalf("compaction at %d: %v", compactRev, err)
				}
			}
			if tc.reopen {
				s.Close()
				if err := kval.Close(); err != nil {
					t.Fatal(err)
				}
				if !tc.wait {
					t.Logf("compaction before Close: %v (ErrClosed means cut short)", <-done)
				}
				if kval, err = mvcc.Open(path, nil, nil, kvOpts); err != nil {
					t.Fatalf("reopen: %v", err)
				}
				s = observe(t, kval, Options{})
			}
			defer kval.Close()
			defer s.Close()
			if got := kval.CompactRev(); got != compactRev {
				t.Fatalf("CompactRev() = %d, want %d", got, compactRev)
			}

			ref := h.reference(t)
			last := kval.Rev()
			st, err := s.Watch(kv.WatchRequest{Key: all.Key, End: all.End, StartRevision: compactRev})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			got := recvUntil(t, st, recvTimeout, func(r kv.WatchResponse) bool { return r.Revision == last })
			if err := ref.check(all, compactRev, got, checkOptions{}); err != nil {
				t.Errorf("watch from the compact revision %d: %v", compactRev, err)
			}
			if len(got) == 0 || len(got[0].Events) < 2 ||
				got[0].Events[0].Type != kv.EventDelete || got[0].Events[0].KV.ModRevision != compactRev ||
				got[0].Events[1].Type != kv.EventPut || got[0].Events[1].KV.ModRevision != compactRev {
				t.Errorf("watch from the compact revision %d: got %v, want its delete of a and put of c first", compactRev, fmtResponses(got))
			}

			below, err := s.Watch(kv.WatchRequest{Key: all.Key, End: all.End, StartRevision: compactRev - 1})
			if err != nil {
				t.Fatal(err)
			}
			defer below.Close()
			got = recvUntil(t, below, recvTimeout, isFinal)
			if len(got) != 1 || got[0].CompactRevision != compactRev {
				t.Errorf("watch from %d: got %v, want compacted at %d", compactRev-1, fmtResponses(got), compactRev)
			}
		})
	}
}

// TestPrevKVCompacted: an event whose previous version was compacted away
// ends the watch with a compacted response instead of arriving without it.
func TestPrevKVCompacted(t *testing.T) {
	for _, tc := range []struct {
		name    string
		compact int64
		past    bool // watch from the past, so events come from history
		// want: the revisions of the events received, then the compact
		// revision of the final response, or 0 for none.
		wantRevs      []int64
		wantCompacted int64
	}{
		{name: "previous kept", compact: 3, wantRevs: []int64{4, 5}},
		{name: "previous kept, from history", compact: 3, past: true, wantRevs: []int64{4, 5}},
		{name: "previous of first compacted", compact: 4, wantCompacted: 4},
		{name: "previous of first compacted, from history", compact: 4, past: true, wantCompacted: 4},
		{name: "all compacted", compact: 5, wantCompacted: 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestStore(t, Options{})
			h := newHistory()
			h.put(t, s, "k", "1") // 2
			h.put(t, s, "k", "2") // 3
			req := kv.WatchRequest{Key: []byte("k"), PrevKV: true}
			var st *Stream
			watch := func() {
				var err error
				if st, err = s.Watch(req); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(st.Close)
			}
			if tc.past {
				req.StartRevision = 4
			} else {
				watch() // synced: the puts below are queued as they are made
			}
			h.put(t, s, "k", "3") // 4
			h.put(t, s, "k", "4") // 5
			if err := h.compact(s, tc.compact); err != nil {
				t.Fatal(err)
			}
			if tc.past {
				watch()
			}
			got := recvUntil(t, st, recvTimeout, func(r kv.WatchResponse) bool { return isFinal(r) || r.Revision == 5 })
			if err := h.reference(t).check(req, 4, got, checkOptions{}); err != nil {
				t.Error(err)
			}
			var revs []int64
			var compacted int64
			for _, r := range got {
				for _, ev := range r.Events {
					revs = append(revs, ev.KV.ModRevision)
				}
				compacted = max(compacted, r.CompactRevision)
			}
			if len(revs) != len(tc.wantRevs) || compacted != tc.wantCompacted {
				t.Errorf("got %v, want events at %v and compacted at %d", fmtResponses(got), tc.wantRevs, tc.wantCompacted)
			}
		})
	}
}

// TestCompactBelowWatchStart: compacting while a watcher behind it waits
// to be read never makes it skip: once read, it ends compacted.
func TestCompactBelowWatchStart(t *testing.T) {
	s := newTestStore(t, Options{QueueLimit: 4})
	h := newHistory()
	for range 20 {
		h.put(t, s, "k", "v")
	}
	st, err := s.Watch(kv.WatchRequest{Key: []byte("k"), StartRevision: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// Take one response, so the watcher has caught up a little and then
	// waits for its reader with a full queue.
	first := recvUntil(t, st, recvTimeout, func(kv.WatchResponse) bool { return true })
	if err := h.compact(s, 15); err != nil {
		t.Fatal(err)
	}
	h.put(t, s, "k", "after")
	rest := recvUntil(t, st, recvTimeout, isFinal)
	got := append(first, rest...)
	if err := h.reference(t).check(kv.WatchRequest{Key: []byte("k")}, 2, got, checkOptions{}); err != nil {
		t.Error(err)
	}
	if last := got[len(got)-1]; last.CompactRevision != 15 {
		t.Errorf("got %v, want compacted at 15 last", fmtResponses(got))
	}
}
