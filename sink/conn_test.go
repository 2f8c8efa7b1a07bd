package sink

import (
	"net"
	"os"
	"testing"
	"testing/synctest"
	"time"
)

// writeTimeout is the API's default --write-timeout.
const writeTimeout = 30 * time.Second

// deadlineConn records the write deadlines set on it.
type deadlineConn struct {
	net.Conn
	set []time.Time
}

func (c *deadlineConn) SetWriteDeadline(t time.Time) error {
	c.set = append(c.set, t)
	return nil
}
func (c *deadlineConn) Write(b []byte) (int, error) { return len(b), nil }

// TestConnSinkDeadlineSlack checks that a stream's sends keep a write
// deadline of about the write timeout ahead, moving it only once it is
// deadlineSlack stale rather than on every send.
func TestConnSinkDeadlineSlack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &deadlineConn{}
		s := &Conn{conn: c, deadlineSet: time.Now(), timeout: writeTimeout}
		for range 100 { // a burst: the deadline set at the head holds
			if !s.Send([]byte("x")) {
				t.Fatal("send failed")
			}
		}
		if len(c.set) != 0 {
			t.Fatalf("a burst within %s set the deadline %d times, want none", deadlineSlack, len(c.set))
		}
		time.Sleep(deadlineSlack)
		s.Send([]byte("x"))
		s.Send([]byte("x"))
		if len(c.set) != 1 || !c.set[0].Equal(time.Now().Add(writeTimeout)) {
			t.Fatalf("after %s: deadlines set %v, want one, %s from now", deadlineSlack, c.set, writeTimeout)
		}
	})
}

// slowReaderConn is the server's end of a connection whose client takes
// perRead bytes every interval, or nothing when perRead is zero; a write
// fails with os.ErrDeadlineExceeded once the deadline set on it passes.
type slowReaderConn struct {
	net.Conn
	perRead  int
	interval time.Duration
	deadline time.Time
	taken    int
}

func (c *slowReaderConn) SetWriteDeadline(t time.Time) error {
	c.deadline = t
	return nil
}

func (c *slowReaderConn) Write(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		if !c.deadline.IsZero() && !time.Now().Before(c.deadline) {
			return n, os.ErrDeadlineExceeded
		}
		if c.perRead == 0 {
			time.Sleep(time.Until(c.deadline))
			continue
		}
		time.Sleep(c.interval)
		m := min(c.perRead, len(b)-n)
		n += m
		c.taken += m
	}
	return n, nil
}

// TestConnSinkSlowReader: a client that reads a large message slowly, but
// steadily, gets all of it, however long the whole message takes; one
// that reads nothing is cut off after the write timeout.
func TestConnSinkSlowReader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const timeout = 30 * time.Second
		msg := make([]byte, 1<<20)
		// 16 KiB every 5 s: 1 MiB takes 320 s, each 64 KiB 20 s.
		c := &slowReaderConn{perRead: 16 << 10, interval: 5 * time.Second}
		s := &Conn{conn: c, deadlineSet: time.Now(), timeout: timeout}
		_ = c.SetWriteDeadline(time.Now().Add(timeout))
		start := time.Now()
		if !s.Send(msg) || c.taken != len(msg) {
			t.Fatalf("a reader taking 16 KiB every 5 s was cut off after %s, having taken %d of %d bytes", time.Since(start), c.taken, len(msg))
		}

		stalled := &slowReaderConn{}
		s = &Conn{conn: stalled, deadlineSet: time.Now(), timeout: timeout}
		_ = stalled.SetWriteDeadline(time.Now().Add(timeout))
		start = time.Now()
		if s.Send(msg) {
			t.Fatal("a reader that takes nothing got the message")
		}
		if d := time.Since(start); d != timeout {
			t.Fatalf("a reader that takes nothing was cut off after %s, want %s", d, timeout)
		}
	})
}
