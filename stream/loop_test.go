package stream

import (
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// fakeSink records what is sent; it is gone once gone is closed.
type fakeSink struct {
	sent   []string
	gone   chan struct{}
	closed bool
}

func newFakeSink() *fakeSink { return &fakeSink{gone: make(chan struct{})} }

func (s *fakeSink) Send(b []byte) bool {
	select {
	case <-s.gone:
		return false
	default:
	}
	s.sent = append(s.sent, string(b))
	return true
}
func (s *fakeSink) Gone() <-chan struct{} { return s.gone }
func (s *fakeSink) Close()                { s.closed = true }
func (s *fakeSink) Cut()                  {}

// fakeSource writes what is put in items when ready is signalled, and
// records how the loop ended it.
type fakeSource struct {
	ready  chan struct{}
	done   chan struct{}
	items  []string
	final  bool // Take ends the stream after items
	ended  error
	closed bool
	sink   *fakeSink
}

func newFakeSource() *fakeSource {
	return &fakeSource{ready: make(chan struct{}, 1), done: make(chan struct{})}
}

func (f *fakeSource) Open(s Sink) bool       { return s.Send([]byte("open")) }
func (f *fakeSource) Ready() <-chan struct{} { return f.ready }
func (f *fakeSource) Done() <-chan struct{}  { return f.done }
func (f *fakeSource) Close() {
	if f.sink != nil && f.sink.closed {
		panic("the sink was closed before the source")
	}
	f.closed = true
}
func (f *fakeSource) Take(s Sink) (wrote, end bool) {
	for _, it := range f.items {
		if !s.Send([]byte(it)) {
			return true, true
		}
	}
	wrote = len(f.items) > 0
	f.items = nil
	return wrote, f.final
}
func (f *fakeSource) KeepAlive(s Sink) bool { return s.Send([]byte("keep-alive")) }
func (f *fakeSource) End(s Sink, why error) {
	f.ended = why
	s.Send([]byte("end: " + why.Error()))
}

// run starts the loop on a new source and sink; wait waits for it.
func run(l Loop, g Guard) (src *fakeSource, s *fakeSink, wait func()) {
	src, s = newFakeSource(), newFakeSink()
	src.sink = s
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.Run(s, src, g)
	}()
	return src, s, func() {
		<-done
		if !src.closed || !s.closed {
			panic("the loop returned without closing its source and sink")
		}
	}
}

// TestLoopKeepAlive: an idle stream gets a keep-alive every interval,
// and one that writes gets none while it writes.
func TestLoopKeepAlive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stop := make(chan struct{})
		src, s, wait := run(Loop{KeepAlive: 10 * time.Second, Stop: stop}, Guard{})
		time.Sleep(25 * time.Second)
		synctest.Wait()
		if want := []string{"open", "keep-alive", "keep-alive"}; !slices.Equal(s.sent, want) {
			t.Fatalf("idle 25 s with a 10 s keep-alive: sent %q, want %q", s.sent, want)
		}
		// Writes every 2 s (past the second the keep-alive moves at most
		// once in) hold it off.
		s.sent = nil
		for range 20 {
			time.Sleep(2 * time.Second)
			src.items = []string{"x"}
			src.ready <- struct{}{}
			synctest.Wait()
		}
		if slices.Contains(s.sent, "keep-alive") {
			t.Fatalf("a stream writing every 2 s got a keep-alive: %q", s.sent)
		}
		close(stop)
		wait()
		if !errors.Is(src.ended, ErrShutdown) {
			t.Fatalf("stopped: ended with %v, want ErrShutdown", src.ended)
		}
	})
}

// TestLoopEnds: every way a stream ends, and what the source is told.
func TestLoopEnds(t *testing.T) {
	denied := errors.New("denied")
	for _, tt := range []struct {
		name string
		// guard is the stream's; act ends it.
		guard func(changed chan struct{}, allowed *bool) Guard
		act   func(src *fakeSource, s *fakeSink, changed chan struct{}, allowed *bool)
		want  error // what End was told; nil: not called
	}{
		{"client gone", nil, func(_ *fakeSource, s *fakeSink, _ chan struct{}, _ *bool) { close(s.gone) }, nil},
		{"taken over", nil, func(src *fakeSource, _ *fakeSink, _ chan struct{}, _ *bool) { close(src.done) }, nil},
		{"final message", nil, func(src *fakeSource, _ *fakeSink, _ chan struct{}, _ *bool) {
			src.items, src.final = []string{"last"}, true
			src.ready <- struct{}{}
		}, nil},
		{"token expired", func(chan struct{}, *bool) Guard { return Guard{Expires: time.Now().Add(time.Hour)} },
			func(*fakeSource, *fakeSink, chan struct{}, *bool) { time.Sleep(time.Hour) }, ErrTokenExpired},
		{"recheck refuses", func(changed chan struct{}, allowed *bool) Guard {
			return Guard{Changed: changed, Next: func() <-chan struct{} { return changed },
				Recheck: func() error {
					if *allowed {
						return nil
					}
					return denied
				}}
		}, func(_ *fakeSource, _ *fakeSink, changed chan struct{}, allowed *bool) {
			changed <- struct{}{} // still allowed: goes on
			synctest.Wait()
			*allowed = false
			changed <- struct{}{}
		}, denied},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				changed, allowed := make(chan struct{}), true
				var g Guard
				if tt.guard != nil {
					g = tt.guard(changed, &allowed)
				}
				src, s, wait := run(Loop{KeepAlive: 24 * time.Hour, Stop: make(chan struct{})}, g)
				synctest.Wait()
				tt.act(src, s, changed, &allowed)
				wait()
				if !errors.Is(src.ended, tt.want) || (tt.want == nil) != (src.ended == nil) {
					t.Fatalf("ended with %v, want %v", src.ended, tt.want)
				}
			})
		})
	}
}
