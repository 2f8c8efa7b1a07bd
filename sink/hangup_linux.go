//go:build linux

package sink

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"syscall"
)

// hangups tells the streams on taken-over connections that their client
// has left, for all of them from one goroutine waiting in epoll for each
// connection's hang-up: EPOLLRDHUP when the client closes or shuts down
// its side, EPOLLHUP or EPOLLERR when the connection is reset. A goroutine
// per stream blocked in Read did the same for about 4 KiB of stack per
// idle watcher, a third of what one costs. Bytes a client sends after its
// request are of no use; they are read and dropped as they come, so that
// they do not sit in the kernel's buffers.
//
// Each registration carries a generation beside its descriptor, so that a
// hang-up already read for a connection since closed is never taken for
// one of a new connection that reuses the descriptor's number.
type hangups struct {
	epfd    int
	wake    [2]int // a pipe whose read end wakes the loop to stop
	mu      sync.Mutex
	byFD    map[int32]hangupWatch
	gen     int32
	stopped bool
	done    chan struct{}
}

type hangupWatch struct {
	gen  int32
	rc   syscall.RawConn
	left chan struct{}
}

const (
	hangupEvents = syscall.EPOLLRDHUP | syscall.EPOLLHUP | syscall.EPOLLERR
	// dropLimit bounds what one wake-up reads of one client's bytes, so
	// that a client sending without pause does not hold the loop.
	dropLimit = 64 << 10
)

func newHangups() (*hangups, error) {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	h := &hangups{epfd: epfd, byFD: map[int32]hangupWatch{}, done: make(chan struct{})}
	if err := syscall.Pipe2(h.wake[:], syscall.O_CLOEXEC|syscall.O_NONBLOCK); err != nil {
		syscall.Close(epfd)
		return nil, fmt.Errorf("pipe2: %w", err)
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(h.wake[0])}
	if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, h.wake[0], &ev); err != nil {
		h.closeFDs()
		return nil, fmt.Errorf("epoll_ctl: %w", err)
	}
	go h.loop()
	return h, nil
}

func (h *hangups) closeFDs() {
	syscall.Close(h.wake[0])
	syscall.Close(h.wake[1])
	syscall.Close(h.epfd)
}

// loop closes the left channel of each connection whose client hangs up,
// and forgets it, until stop.
func (h *hangups) loop() {
	defer close(h.done)
	events := make([]syscall.EpollEvent, 128)
	for {
		n, err := syscall.EpollWait(h.epfd, events, -1)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		h.mu.Lock()
		if err != nil || h.stopped {
			h.mu.Unlock()
			return
		}
		for _, ev := range events[:n] {
			w, ok := h.byFD[ev.Fd]
			if !ok || w.gen != ev.Pad {
				continue
			}
			if ev.Events&hangupEvents == 0 && dropUnread(w.rc) {
				continue // bytes, dropped; the client is still there
			}
			delete(h.byFD, ev.Fd)
			_ = syscall.EpollCtl(h.epfd, syscall.EPOLL_CTL_DEL, int(ev.Fd), nil)
			close(w.left)
		}
		h.mu.Unlock()
	}
}

// watch closes left when conn's client hangs up, until forget is called,
// which must be before conn is closed. ok is false if conn cannot be
// watched here (not a socket of this process's own).
func (h *hangups) watch(conn net.Conn, left chan struct{}) (forget func(), ok bool) {
	sc, isSys := conn.(syscall.Conn)
	if !isSys {
		return nil, false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, false
	}
	var fd, gen int32
	var added bool
	err = rc.Control(func(f uintptr) {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.stopped {
			return
		}
		h.gen++
		fd, gen = int32(f), h.gen
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN | hangupEvents, Fd: fd, Pad: gen}
		if syscall.EpollCtl(h.epfd, syscall.EPOLL_CTL_ADD, int(f), &ev) == nil {
			h.byFD[fd] = hangupWatch{gen: gen, rc: rc, left: left}
			added = true
		}
	})
	if err != nil || !added {
		return nil, false
	}
	return func() { h.forget(rc, fd, gen) }, true
}

// forget stops watching the connection registered as fd and gen, and
// reads what its client sent since the last wake-up: a socket closed
// with unread bytes is reset, and a reset can cost the client the last of
// the stream it has not read yet.
func (h *hangups) forget(rc syscall.RawConn, fd, gen int32) {
	drop := func(epollToo bool) {
		h.mu.Lock()
		defer h.mu.Unlock()
		if w, ok := h.byFD[fd]; ok && w.gen == gen {
			delete(h.byFD, fd)
			if epollToo && !h.stopped {
				_ = syscall.EpollCtl(h.epfd, syscall.EPOLL_CTL_DEL, int(fd), nil)
			}
		}
	}
	if err := rc.Control(func(uintptr) { drop(true) }); err != nil {
		drop(false) // closed already: the kernel has dropped it from epoll
		return
	}
	dropUnread(rc)
}

// dropUnread reads and drops up to dropLimit bytes the client has sent,
// without waiting for more, through rc, so that a connection closed
// meanwhile is never read by its old number. It reports whether the
// client is still there: false on end of file or an error.
func dropUnread(rc syscall.RawConn) bool {
	var buf [4096]byte
	alive := true
	for read := 0; alive && read < dropLimit; {
		n := 0
		err := rc.Read(func(f uintptr) bool {
			var err error
			n, err = syscall.Read(int(f), buf[:])
			switch {
			case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EINTR):
				n = -1 // nothing more for now
			case err != nil || n == 0:
				alive = false
			}
			return true // never wait
		})
		if err != nil {
			return false
		}
		if n <= 0 {
			break
		}
		read += n
	}
	return alive
}

// stop ends the loop and waits for it. Connections still watched are
// forgotten: nothing tells their streams of a hang-up any more.
func (h *hangups) stop() {
	h.mu.Lock()
	if h.stopped {
		h.mu.Unlock()
		return
	}
	h.stopped = true
	h.mu.Unlock()
	_, _ = syscall.Write(h.wake[1], []byte{0})
	<-h.done
	h.closeFDs()
}
