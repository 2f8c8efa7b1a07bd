package main

import (
	"errors"
	"net"
	"syscall"
	"testing"
	"time"
)

// TestLimitListener: at most n connections are accepted at once, a closed
// one gives its slot back (once, however often it is closed), accepted
// connections reach their socket, and Close ends a waiting Accept.
func TestLimitListener(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := newLimitListener(inner, 2)
	defer l.Close()
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	for range 3 {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	first, second := <-accepted, <-accepted
	select {
	case <-accepted:
		t.Fatal("a third connection was accepted past the limit of 2")
	case <-time.After(200 * time.Millisecond):
	}
	if _, err := first.(syscall.Conn).SyscallConn(); err != nil {
		t.Fatalf("SyscallConn of an accepted connection: %v", err)
	}
	first.Close()
	first.Close() // a second close gives back nothing more
	select {
	case third := <-accepted:
		defer third.Close()
	case <-time.After(10 * time.Second):
		t.Fatal("a closed connection did not give its slot back")
	}
	if len(l.slots) != 2 {
		t.Fatalf("%d slots taken with two connections open, want 2", len(l.slots))
	}
	second.Close()
	l.Close()
	for range accepted {
	}
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Accept after Close: %v, want net.ErrClosed", err)
	}
}
