package watch

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/httpkv/httpkv/kv"
)

// TestNotify: a watch started with a Notify function has no Ready
// channel; the function is called whenever responses are queued for it
// (published events, a catch-up from history, a progress bookmark, its
// end), and Next then returns them.
func TestNotify(t *testing.T) {
	h := &memHistory{compact: 1}
	s := New(h, 1, Options{})
	defer s.Close()
	var calls atomic.Int64
	signalled := make(chan struct{}, 1)
	notify := func() {
		calls.Add(1)
		select {
		case signalled <- struct{}{}:
		default:
		}
	}
	for _, ch := range []kv.Changes{putAt(2, "a", "1"), putAt(3, "b", "2")} {
		h.add(ch)
		s.Publish([]kv.Changes{ch})
	}
	st := mustWatch(t, s, kv.WatchRequest{Key: []byte("a"), End: []byte("c"), StartRevision: 2, Notify: notify})
	if st.Ready() != nil {
		t.Fatalf("Ready() of a watch with Notify = %v, want nil", st.Ready())
	}
	take := func(what string, n int) string {
		t.Helper()
		var got []string
		deadline := time.After(recvTimeout)
		for len(got) < n {
			select {
			case <-signalled:
			case <-deadline:
				t.Fatalf("%s: Notify was not called; got %q, want %d responses", what, got, n)
			}
			for _, r := range st.Next() {
				switch {
				case r.Canceled:
					got = append(got, "canceled")
				case r.Progress:
					got = append(got, fmt.Sprintf("progress@%d", r.Revision))
				default:
					for _, ev := range r.Events {
						got = append(got, fmt.Sprintf("%s=%s@%d", ev.KV.Key, ev.KV.Value, ev.KV.ModRevision))
					}
				}
			}
			st.Release()
		}
		return fmt.Sprint(got)
	}
	if got := take("catch-up from history", 2); got != "[a=1@2 b=2@3]" {
		t.Fatalf("catch-up = %s", got)
	}
	ch := putAt(4, "b", "3")
	h.add(ch)
	s.Publish([]kv.Changes{ch})
	if got := take("a published revision", 1); got != "[b=3@4]" {
		t.Fatalf("published = %s", got)
	}
	st.RequestProgress()
	if got := take("a progress request", 1); got != "[progress@4]" {
		t.Fatalf("progress = %s", got)
	}
	st.Close()
	if got := take("close", 1); got != "[canceled]" {
		t.Fatalf("close = %s", got)
	}
	if calls.Load() < 4 {
		t.Fatalf("Notify called %d times, want at least 4", calls.Load())
	}
}

// TestPublishWakesOncePerCommit: a reader is signalled once for all the
// revisions of one Publish, after every one of them is queued, so that
// whatever it takes on that signal is the whole commit. A reader woken at
// the first revision would write each of the rest on a wake of its own.
func TestPublishWakesOncePerCommit(t *testing.T) {
	h := &memHistory{compact: 1}
	s := New(h, 1, Options{})
	defer s.Close()
	var queuedAtSignal []int
	var st *Stream
	notify := func() {
		// Count what is queued without taking it; -1 when called under
		// the watcher's own lock, where nothing is settled yet.
		if !st.w.mu.TryLock() {
			queuedAtSignal = append(queuedAtSignal, -1)
			return
		}
		queuedAtSignal = append(queuedAtSignal, st.w.queued)
		st.w.mu.Unlock()
	}
	st = mustWatch(t, s, kv.WatchRequest{Key: []byte("a"), End: []byte("z"), Notify: notify})
	single := mustWatch(t, s, kv.WatchRequest{Key: []byte("b")})

	commit := []kv.Changes{putAt(2, "a", "1"), putAt(3, "b", "2"), putAt(4, "c", "3")}
	for _, ch := range commit {
		h.add(ch)
	}
	s.Publish(commit)
	if fmt.Sprint(queuedAtSignal) != "[3]" {
		t.Fatalf("Publish of 3 revisions: Notify saw %v events queued at each call, want [3] (one call, after all)", queuedAtSignal)
	}
	if n := len(st.Next()); n != 3 {
		t.Fatalf("Next() after one signal returned %d responses, want 3", n)
	}
	select {
	case <-single.Ready():
	default:
		t.Fatalf("the watcher of b was not signalled by a Publish that wrote b")
	}
	if rs := single.Next(); len(rs) != 1 || rs[0].Revision != 3 {
		t.Fatalf("Next() of the watcher of b = %v, want the response at revision 3", rs)
	}
	select {
	case <-single.Ready():
		t.Fatalf("the watcher of b was signalled twice for one revision")
	default:
	}
}

// TestNotifyOutsideLocks: Notify is called with no lock of the store's
// held, whatever signals it (a published revision, a progress bookmark,
// the watch's end), so that a reader may call back into the store from
// it. Called under the store's lock, the call back deadlocked.
func TestNotifyOutsideLocks(t *testing.T) {
	h := &memHistory{compact: 1}
	s := New(h, 1, Options{})
	called := make(chan struct{}, 16)
	notify := func() {
		_ = s.Stats() // takes the store's lock
		called <- struct{}{}
	}
	// Closed by the store's Close, at the end: a cleanup that closed it
	// would wait for the store's lock, which a failure leaves held.
	st, err := s.Watch(kv.WatchRequest{Key: []byte("a"), Notify: notify})
	if err != nil {
		t.Fatal(err)
	}
	wait := func(what string, signal func()) {
		t.Helper()
		done := make(chan struct{})
		go func() {
			defer close(done)
			signal()
		}()
		select {
		case <-called:
		case <-time.After(recvTimeout):
			t.Fatalf("%s: Notify was not called within %s (deadlocked under the store's lock?)", what, recvTimeout)
		}
		<-done
		st.Next()
		st.Release()
	}
	wait("a published revision", func() {
		ch := putAt(2, "a", "1")
		h.add(ch)
		s.Publish([]kv.Changes{ch})
	})
	wait("a progress request", st.RequestProgress)
	wait("the watch's end", s.Close)
}
