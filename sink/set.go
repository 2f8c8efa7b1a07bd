package sink

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"
)

// Set counts the open streams of an API and the connections they took
// over, so that closing it ends them all: first by asking (Stop: each
// sends its last message and returns), then, past the caller's grace, by
// closing the connections of those whose clients do not take that last
// message. It owns the hangups that notice clients leaving the
// connections taken over, started with the first.
type Set struct {
	// stop is closed when the set begins to close.
	stop chan struct{}

	mu      sync.Mutex // guards the fields below
	closing bool
	active  int
	// drained is closed once closing and no stream is left.
	drained chan struct{}
	// taken holds the HTTP/1 connections streams took over (hijacked),
	// which http.Server neither tracks nor closes.
	taken map[net.Conn]struct{}
	// forced is set once the taken connections have been closed; a
	// connection taken later is closed at once.
	forced bool
	// hangups notice clients leaving the connections taken over; started
	// with the first (see takenHangups), nil where there are none.
	hangups      *hangups
	hangupsTried bool
	// logf reports why the hangups could not start.
	logf func(error)
}

// NewSet returns an empty set; logf, if not nil, is told why the
// hangups cannot start (each stream then reads for itself).
func NewSet(logf func(error)) *Set {
	return &Set{stop: make(chan struct{}), drained: make(chan struct{}), taken: make(map[net.Conn]struct{}), logf: logf}
}

// Stop is closed when the set begins to close: every stream is to send
// its last message and return.
func (s *Set) Stop() <-chan struct{} { return s.stop }

// Serve serves a long-lived stream whose headers are set: run writes it
// to a sink until it ends. Over HTTP/1.x the stream takes the connection
// over and run runs on a goroutine of its own: an idle stream then costs
// that small goroutine instead of the server's connection goroutine, its
// grown stack and its buffers. Streams, and the connections they take
// over, are counted for Close and Wait. Once the set is closing Serve
// calls abandon instead of run, and returns false: the caller answers
// that the server is shutting down. If the connection is lost while
// taken over, abandon is called too, and Serve returns true (there is
// nobody to answer). Each piece of a send has timeout.
func (s *Set) Serve(w http.ResponseWriter, r *http.Request, timeout time.Duration, run func(Sink), abandon func()) bool {
	if !s.Start() {
		abandon()
		return false
	}
	if r.ProtoMajor == 1 {
		sink, taken, err := hijack(w, s.takenHangups(), timeout)
		switch {
		case err != nil:
			abandon() // the client is gone already
			s.End()
			return true
		case taken:
			s.take(sink.conn)
			go func() {
				defer s.End()
				defer s.release(sink.conn)
				run(sink)
			}()
			return true
		}
	}
	defer s.End()
	w.WriteHeader(http.StatusOK)
	run(NewResponse(w, r, timeout))
	return true
}

// Start counts a new stream in, unless the set is closing: a response
// that Close is to wait for but that Serve does not run (a snapshot).
func (s *Set) Start() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.active++
	return true
}

// End counts a stream out.
func (s *Set) End() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active--
	if s.closing && s.active == 0 {
		close(s.drained)
	}
}

// take records the connection a stream took over; release forgets it.
func (s *Set) take(c net.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.forced {
		c.Close()
		return
	}
	s.taken[c] = struct{}{}
}

func (s *Set) release(c net.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.taken, c)
}

// BeginClose stops new streams and asks the open ones to end. It is safe
// to call more than once.
func (s *Set) BeginClose() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return
	}
	s.closing = true
	close(s.stop)
	if s.active == 0 {
		close(s.drained)
	}
}

// Wait waits until every stream has ended, or ctx is done; then it
// closes the connections streams took over, which ends their sends at
// once, stops the hangups, and returns ctx's error. Streams still open
// then notice their client leaving only when a write fails, which the
// closed connection makes it do. Call BeginClose first.
func (s *Set) Wait(ctx context.Context) error {
	var err error
	select {
	case <-s.drained:
	case <-ctx.Done():
		s.mu.Lock()
		s.forced = true
		for c := range s.taken {
			c.Close()
		}
		s.mu.Unlock()
		err = ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hangups != nil {
		s.hangups.stop()
	}
	return err
}

// takenHangups returns the hangups of the connections streams take over,
// started with the first; nil where there are none (not Linux), and the
// streams read for themselves.
func (s *Set) takenHangups() *hangups {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hangups == nil && !s.hangupsTried {
		s.hangupsTried = true
		hs, err := newHangups()
		if err != nil {
			if s.logf != nil {
				s.logf(err)
			}
		} else {
			s.hangups = hs
		}
	}
	return s.hangups
}

// StartHangups starts the hangups now rather than with the first stream
// that takes its connection over, so that a test counting goroutines
// counts theirs before.
func (s *Set) StartHangups() { s.takenHangups() }
