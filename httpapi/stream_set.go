package httpapi

import (
	"context"
	"net"
	"sync"
)

// streamSet counts the open watch streams of a Handler and the
// connections they took over, so that closing the handler ends them all:
// first by asking (stop: each sends "shutting down" and returns), then,
// past the caller's grace, by closing the connections of those whose
// clients do not take that last message.
type streamSet struct {
	// stop is closed when the handler begins to close.
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
}

func newStreamSet() *streamSet {
	return &streamSet{stop: make(chan struct{}), drained: make(chan struct{}), taken: make(map[net.Conn]struct{})}
}

// start counts a new stream in, unless the set is closing.
func (s *streamSet) start() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.active++
	return true
}

// end counts a stream out.
func (s *streamSet) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active--
	if s.closing && s.active == 0 {
		close(s.drained)
	}
}

// take records the connection a stream took over; release forgets it.
func (s *streamSet) take(c net.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.forced {
		c.Close()
		return
	}
	s.taken[c] = struct{}{}
}

func (s *streamSet) release(c net.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.taken, c)
}

// beginClose stops new streams and asks the open ones to end. It is safe
// to call more than once.
func (s *streamSet) beginClose() {
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

// wait waits until every stream has ended, or ctx is done; then it closes
// the connections streams took over, which ends their sends at once, and
// returns ctx's error.
func (s *streamSet) wait(ctx context.Context) error {
	select {
	case <-s.drained:
		return nil
	case <-ctx.Done():
	}
	s.mu.Lock()
	s.forced = true
	for c := range s.taken {
		c.Close()
	}
	s.mu.Unlock()
	return ctx.Err()
}
