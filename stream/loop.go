package stream

import (
	"errors"
	"time"
)

// Sink is where a stream is written: package sink's connections, as the
// loop needs them.
type Sink interface {
	// Send writes and flushes b; false means the client is gone.
	Send(b []byte) bool
	// Gone is closed when the client goes away.
	Gone() <-chan struct{}
	// Close ends the response and releases what the sink holds.
	Close()
	// Cut makes a send in progress, or the next, fail, from any
	// goroutine: a client that has stopped reading is let go.
	Cut()
}

// Source is one kind of stream as the loop drives it: a single watch, a
// stream of many watchers, an election's observers. The kinds differ in
// what they take and how they encode it, not in the loop.
type Source interface {
	// Open writes the stream's first messages; false: the client is gone.
	Open(s Sink) bool
	// Ready is signalled when Take may have something to write.
	Ready() <-chan struct{}
	// Take writes what is ready. wrote reports that something was sent
	// (the next keep-alive is an interval later); end, that the stream
	// is over: its last message is written, or the client is gone.
	Take(s Sink) (wrote, end bool)
	// KeepAlive writes what keeps an idle connection open: nothing was
	// written for an interval. False: the client is gone.
	KeepAlive(s Sink) bool
	// End writes the last of a stream the loop ends, for why:
	// ErrShutdown, ErrTokenExpired, or what Guard.Recheck returned.
	End(s Sink, why error)
	// Done is closed when the stream ends from elsewhere (another
	// connection took it over); nil when nothing does that.
	Done() <-chan struct{}
	// Close releases what the source holds; the loop calls it last,
	// before it closes the sink.
	Close()
}

// Guard is what checks again, while a stream is open, that its caller
// may still read it.
type Guard struct {
	// Expires is when the token the stream was opened with expires; zero
	// for none.
	Expires time.Time
	// Changed is signalled when users, roles or the enabled flag change;
	// nil when nothing changes. The first channel is taken before the
	// request was authorized, so that no change slips between.
	Changed <-chan struct{}
	// Next returns the channel of the change after the one signalled.
	Next func() <-chan struct{}
	// Recheck decides again after a change: an error ends the stream
	// (Source.End), nil lets it go on.
	Recheck func() error
}

// Why the loop ends a stream, beside what Guard.Recheck returns.
var (
	// ErrShutdown: the server is closing.
	ErrShutdown = errors.New("shutting down")
	// ErrTokenExpired: the token the stream was opened with has expired.
	ErrTokenExpired = errors.New("token expired")
)

// Loop runs streams: keep-alive, the token's expiry, shutdown and the
// permission re-check are written here once, for every kind of stream.
type Loop struct {
	// KeepAlive is how long a stream may be idle before KeepAlive.
	KeepAlive time.Duration
	// Stop is closed when the server is closing.
	Stop <-chan struct{}
}

// Run writes src to s until the client leaves, the stream ends (Take,
// or Done), the server closes (Stop), the token expires, or a recheck
// refuses; then it closes src and s. It is the one select of every
// stream over shutdown, the client gone, time, and the next thing ready.
func (l Loop) Run(s Sink, src Source, g Guard) {
	defer s.Close()
	defer src.Close()
	if !src.Open(s) {
		return
	}
	keepAlive := time.NewTicker(l.KeepAlive)
	defer keepAlive.Stop()
	// reset puts the next keep-alive an interval after a write, moving it
	// at most once a second (a fraction of the interval, when that is
	// shorter): the timer's lock is taken per move, and a stream of a
	// busy prefix writes many times a second.
	lastReset := time.Now()
	reset := func() {
		if now := time.Now(); now.Sub(lastReset) >= min(time.Second, l.KeepAlive/8) {
			keepAlive.Reset(l.KeepAlive)
			lastReset = now
		}
	}
	var expired <-chan time.Time
	if !g.Expires.IsZero() {
		t := time.NewTimer(time.Until(g.Expires))
		defer t.Stop()
		expired = t.C
	}
	changed := g.Changed
	for {
		select {
		case <-s.Gone():
			return
		case <-src.Done():
			return
		case <-l.Stop:
			src.End(s, ErrShutdown)
			return
		case <-expired:
			src.End(s, ErrTokenExpired)
			return
		case <-changed:
			changed = g.Next()
			if err := g.Recheck(); err != nil {
				src.End(s, err)
				return
			}
		case <-keepAlive.C:
			if !src.KeepAlive(s) {
				return
			}
		case <-src.Ready():
			wrote, end := src.Take(s)
			if end {
				return
			}
			if wrote {
				reset()
			}
		}
	}
}
