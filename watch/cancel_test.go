package watch

import (
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/mvcc"
)

// TestCancelRemovesFromEveryGroup: Stream.Close takes the watcher out of
// whichever group it is in before it returns, and its queued events stop
// counting as pending.
func TestCancelRemovesFromEveryGroup(t *testing.T) {
	single := kv.WatchRequest{Key: []byte("k"), ProgressNotify: true}
	ranged := kv.WatchRequest{Key: []byte("a"), End: []byte("z"), ProgressNotify: true}
	for _, tc := range []struct {
		name string
		req  kv.WatchRequest
		// setup puts the watcher of req in its group and returns it.
		setup func(t *testing.T, s *testStore, h *history, req kv.WatchRequest) *Stream
		want  Stats // groups before Close
	}{
		{"synced key", single, watchSynced, Stats{Synced: 1, PendingEvents: 1}},
		{"synced range", ranged, watchSynced, Stats{Synced: 1, PendingEvents: 1}},
		{"unsynced", single, watchUnsynced, Stats{Unsynced: 1}},
		{"victim", ranged, watchVictim, Stats{Victims: 1, PendingEvents: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestStore(t, Options{QueueLimit: 2})
			h := newHistory()
			st := tc.setup(t, s, h, tc.req)
			got := s.Stats()
			if (got.PendingBytes > 0) != (got.PendingEvents > 0) {
				t.Fatalf("Stats() before Close = %+v: bytes pending without events or the other way round", got)
			}
			got.EventsSent, got.PendingBytes = 0, 0
			if got != tc.want {
				t.Fatalf("Stats() before Close = %+v, want %+v", got, tc.want)
			}
			st.Close()
			if got := s.Stats(); got.Synced+got.Unsynced+got.Victims != 0 || got.PendingEvents != 0 || got.PendingBytes != 0 {
				t.Errorf("Stats() after Close = %+v, want no watchers and nothing pending", got)
			}
			s.mu.Lock()
			n := len(s.all) + len(s.progressing) + len(s.synced.keys)
			root := s.synced.ranges.root
			s.mu.Unlock()
			if n != 0 || root != nil {
				t.Errorf("after Close: %d watchers left in the store's sets, range tree root %v", n, root)
			}
			// Writes after Close reach it no more.
			h.put(t, s, "k", "after")
			if rs := st.Next(); len(rs) != 1 || !rs[0].Canceled {
				t.Errorf("Next() after Close = %v, want only the canceled response", fmtResponses(rs))
			}
			if rs := st.Next(); rs != nil {
				t.Errorf("Next() after the final response = %v, want nil", fmtResponses(rs))
			}
		})
	}
}

// watchSynced starts a caught-up watcher with one event queued.
func watchSynced(t *testing.T, s *testStore, h *history, req kv.WatchRequest) *Stream {
	st := mustWatch(t, s, req)
	h.put(t, s, "k", "1")
	return st
}

// watchUnsynced starts a watcher behind and holds the sync loop so it
// stays there; the loop is let go at cleanup.
func watchUnsynced(t *testing.T, s *testStore, h *history, req kv.WatchRequest) *Stream {
	for range 5 {
		h.put(t, s, "k", "1")
	}
	chosen, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	s.hooks.afterChoose = func() {
		once.Do(func() {
			close(chosen)
			<-release
		})
	}
	t.Cleanup(func() { close(release) })
	req.StartRevision = 2
	st := mustWatch(t, s, req)
	<-chosen
	return st
}

// watchVictim starts a watcher whose unread queue overflows: two events
// queued, the third revision's held for it.
func watchVictim(t *testing.T, s *testStore, h *history, req kv.WatchRequest) *Stream {
	st := mustWatch(t, s, req)
	for range 3 {
		h.put(t, s, "k", "1")
	}
	return st
}

// TestCloseEndsEveryStream: Store.Close stops the loops and ends every
// open stream, whatever its group, with a canceled response "shutting
// down" after the events queued before; it is safe to call twice, and
// watching afterwards fails.
func TestCloseEndsEveryStream(t *testing.T) {
	kval, err := mvcc.Open(filepath.Join(t.TempDir(), "db"), nil, nil, mvcc.Options{NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer kval.Close()
	baseline := runtime.NumGoroutine()

	s := observe(t, kval, Options{QueueLimit: 2, ProgressInterval: time.Millisecond})
	h := newHistory()
	for range 10 {
		h.put(t, s, "k", "v")
	}
	reqs := []kv.WatchRequest{
		{Key: []byte("k")},                                       // synced, read
		{Key: []byte("k"), StartRevision: 2},                     // unsynced, not read
		{Key: []byte("a"), End: []byte{0}, ProgressNotify: true}, // victim, not read
		{Key: []byte("k"), StartRevision: 1000},                  // in the future
	}
	streams := make([]*Stream, len(reqs))
	for i, r := range reqs {
		streams[i] = mustWatch(t, s, r)
	}
	for range 3 {
		h.put(t, s, "k", "more")
	}
	// The first is read by a goroutine waiting in Recv when Close comes.
	var reading sync.WaitGroup
	var read []kv.WatchResponse
	reading.Go(func() {
		for {
			rs, err := streams[0].Recv(context.Background())
			if err != nil || rs == nil {
				return
			}
			read = append(read, rs...)
		}
	})

	s.Close()
	s.Close()
	reading.Wait()
	if _, err := s.Watch(kv.WatchRequest{Key: []byte("k")}); !errors.Is(err, kv.ErrClosed) {
		t.Errorf("Watch after Close = %v, want ErrClosed", err)
	}
	if _, err := s.Watch(kv.WatchRequest{Key: []byte("k")}); !errors.Is(err, kv.ErrClosed) {
		t.Errorf("Watch after Close = %v, want ErrClosed", err)
	}
	ref := h.reference(t)
	for i, st := range streams {
		var got []kv.WatchResponse
		if i == 0 {
			got = read
		} else {
			got = recvUntil(t, st, recvTimeout, isFinal)
		}
		if len(got) == 0 {
			t.Errorf("stream %d (%+v): nothing received", i, reqs[i])
			continue
		}
		if last := got[len(got)-1]; !last.Canceled || last.CancelReason != "shutting down" {
			t.Errorf("stream %d (%+v): got %v, want canceled \"shutting down\" last", i, reqs[i], fmtResponses(got))
		}
		if err := ref.check(reqs[i], st.StartRevision(), got, checkOptions{canceled: true}); err != nil {
			t.Errorf("stream %d (%+v): %v", i, reqs[i], err)
		}
	}

	// The loops are gone: back to the goroutines from before New.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > baseline {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines after Close, %d before New:\n%s", runtime.NumGoroutine(), baseline, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(time.Millisecond)
	}
}
