package watch

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/httpkv/httpkv/kv"
)

// TestProgressNotifyIdle: a watcher that asked for progress gets a
// progress response after ProgressInterval of idleness, and another only
// after as long again; one that did not ask gets none; and a reader that
// stops reading finds one waiting, not one per interval.
func TestProgressNotifyIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const interval = time.Minute
		s := newTestStore(t, Options{ProgressInterval: interval})
		h := newHistory()
		h.put(t, s, "other", "x") // 2
		idle, err := s.Watch(kv.WatchRequest{Key: []byte("k"), ProgressNotify: true})
		if err != nil {
			t.Fatal(err)
		}
		defer idle.Close()
		quiet, err := s.Watch(kv.WatchRequest{Key: []byte("k")})
		if err != nil {
			t.Fatal(err)
		}
		defer quiet.Close()

		// The loop looks every min(interval, 1s): a response comes between
		// one interval and one look after it.
		recvProgress := func(wantRev int64) {
			t.Helper()
			start := time.Now()
			rs, err := idle.Recv(t.Context())
			if err != nil {
				t.Fatalf("Recv: %v", err)
			}
			elapsed := time.Since(start)
			if len(rs) != 1 || !rs[0].Progress || rs[0].Revision != wantRev {
				t.Fatalf("after %v idle: got %v, want one progress at %d", elapsed, fmtResponses(rs), wantRev)
			}
			if elapsed < interval || elapsed > interval+time.Second {
				t.Fatalf("progress after %v idle, want %v to %v", elapsed, interval, interval+time.Second)
			}
		}
		recvProgress(2)
		recvProgress(2)

		// An event resets the idle time.
		h.put(t, s, "other", "y") // 3, not for k
		rev := h.put(t, s, "k", "1")
		rs := idle.Next()
		if len(rs) != 1 || len(rs[0].Events) != 1 || rs[0].Revision != rev {
			t.Fatalf("Next() after put at %d = %v, want its event", rev, fmtResponses(rs))
		}
		recvProgress(rev)

		// The reader stops for many intervals: one progress waits for it.
		time.Sleep(10 * interval)
		synctest.Wait()
		if rs := idle.Next(); len(rs) != 1 || !rs[0].Progress || rs[0].Revision != rev {
			t.Errorf("Next() after %v unread = %v, want one progress at %d", 10*interval, fmtResponses(rs), rev)
		}
		// Without ProgressNotify: only the event.
		if rs := quiet.Next(); len(rs) != 1 || len(rs[0].Events) != 1 {
			t.Errorf("Next() of a watcher without ProgressNotify = %v, want only the event at %d", fmtResponses(rs), rev)
		}
	})
}

// TestRequestProgress: an on-demand progress response comes after every
// event up to its revision, whichever group the watcher is in when asked,
// and a watcher starting in the future gets none claiming revisions it
// has not reached.
func TestRequestProgress(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, s *testStore, h *history) (req kv.WatchRequest, st *Stream, want int64)
	}{
		{"synced", func(t *testing.T, s *testStore, h *history) (kv.WatchRequest, *Stream, int64) {
			req := kv.WatchRequest{Key: []byte("k")}
			st := mustWatch(t, s, req)
			h.put(t, s, "k", "1")
			rev := h.put(t, s, "other", "1")
			st.RequestProgress()
			return req, st, rev
		}},
		{"unsynced with events pending", func(t *testing.T, s *testStore, h *history) (kv.WatchRequest, *Stream, int64) {
			for range 20 {
				h.put(t, s, "k", "v")
			}
			// Hold the first sync pass once it has chosen the watcher.
			chosen, release := make(chan struct{}), make(chan struct{})
			var once sync.Once
			s.hooks.afterChoose = func() {
				once.Do(func() {
					close(chosen)
					<-release
				})
			}
			req := kv.WatchRequest{Key: []byte("k"), StartRevision: 2}
			st := mustWatch(t, s, req)
			<-chosen
			st.RequestProgress()
			var rev int64
			for range 5 {
				rev = h.put(t, s, "k", "w")
			}
			close(release)
			return req, st, rev
		}},
		{"victim", func(t *testing.T, s *testStore, h *history) (kv.WatchRequest, *Stream, int64) {
			req := kv.WatchRequest{Key: []byte("k")}
			st := mustWatch(t, s, req)
			for range 6 {
				h.put(t, s, "k", "v")
			}
			if v := s.Stats().Victims; v != 1 {
				t.Fatalf("Stats().Victims = %d after overflowing the queue, want 1", v)
			}
			st.RequestProgress()
			rev := h.put(t, s, "k", "last")
			return req, st, rev
		}},
		{"future start", func(t *testing.T, s *testStore, h *history) (kv.WatchRequest, *Stream, int64) {
			cur := s.KV().Rev()
			req := kv.WatchRequest{Key: []byte("k"), StartRevision: cur + 5, ProgressNotify: true}
			st := mustWatch(t, s, req)
			st.RequestProgress()
			for range 4 {
				h.put(t, s, "k", "before start")
			}
			h.put(t, s, "k", "at start")
			return req, st, h.put(t, s, "k", "after start")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestStore(t, Options{QueueLimit: 2, ProgressInterval: time.Millisecond})
			h := newHistory()
			req, st, want := tc.run(t, s, h)
			got := recvUntil(t, st, recvTimeout, func(r kv.WatchResponse) bool { return r.Progress && r.Revision >= want })
			if err := h.reference(t).check(req, st.StartRevision(), got, checkOptions{}); err != nil {
				t.Errorf("%v", err)
			}
			if last := got[len(got)-1]; last.Revision != want {
				t.Errorf("got %v, want progress at %d last", fmtResponses(got), want)
			}
		})
	}
}

// mustWatch starts a watch of a *Store or a *testStore.
func mustWatch(tb testing.TB, s interface {
	Watch(kv.WatchRequest) (*Stream, error)
}, r kv.WatchRequest) *Stream {
	tb.Helper()
	st, err := s.Watch(r)
	if err != nil {
		tb.Fatalf("Watch(%+v) = %v", r, err)
	}
	tb.Cleanup(st.Close)
	return st
}
