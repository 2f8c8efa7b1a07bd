//go:build linux

package sink

import (
	"io"
	"net"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// waitQueued waits until n bytes the peer sent are in c's receive queue,
// unread (the ioctl TIOCINQ, as ss -tn shows them in Recv-Q).
func waitQueued(t *testing.T, c net.Conn, n int) {
	t.Helper()
	rc, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		var queued int32
		var errno syscall.Errno
		if err := rc.Control(func(fd uintptr) {
			_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCINQ, uintptr(unsafe.Pointer(&queued)))
		}); err != nil || errno != 0 {
			t.Fatalf("TIOCINQ: %v, %v", err, errno)
		}
		if int(queued) >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes of %d sent arrived within 10 s", queued, n)
		}
	}
}

// connPair returns the two ends of a loopback TCP connection.
func connPair(t *testing.T) (server, client net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	if server == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() {
		server.Close()
		client.Close()
	})
	return server, client
}

func TestHangupsNoticeClientLeaving(t *testing.T) {
	h, err := newHangups()
	if err != nil {
		t.Fatal(err)
	}
	defer h.stop()

	// A client that sends bytes but stays is not gone; one that closes is.
	server, client := connPair(t)
	left := make(chan struct{})
	forget, ok := h.watch(server, left)
	if !ok {
		t.Fatal("watch refused a TCP connection")
	}
	if _, err := client.Write([]byte("more bytes after the request")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-left:
		t.Fatal("a client that sent bytes was taken for gone")
	case <-time.After(100 * time.Millisecond):
	}
	client.Close()
	select {
	case <-left:
	case <-time.After(10 * time.Second):
		t.Fatal("the client's close went unnoticed")
	}
	forget() // after the hang-up: a no-op

	// A stream that ends first reads what its client sent, so that its
	// close is a FIN, not a reset: the client reads all and then EOF. The
	// bytes are there before the stream is watched, so that they are
	// there when it ends (once watched, the hangups may read them at any
	// time).
	server, client = connPair(t)
	if _, err := client.Write([]byte("unread")); err != nil {
		t.Fatal(err)
	}
	waitQueued(t, server, len("unread"))
	left = make(chan struct{})
	forget, ok = h.watch(server, left)
	if !ok {
		t.Fatal("watch refused a TCP connection")
	}
	if _, err := server.Write([]byte("the last message")); err != nil {
		t.Fatal(err)
	}
	forget()
	server.Close()
	_ = client.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, err := io.ReadAll(client)
	if err != nil || string(got) != "the last message" {
		t.Fatalf("the client read %q, %v; want the last message, then EOF", got, err)
	}
	select {
	case <-left:
		t.Fatal("a forgotten connection was reported gone")
	default:
	}
}

// TestHangupsDropWhatClientsSend: a client that keeps sending has its
// bytes read and dropped, so that its writes go on instead of filling
// the kernel's buffers, and it is not taken for gone.
func TestHangupsDropWhatClientsSend(t *testing.T) {
	h, err := newHangups()
	if err != nil {
		t.Fatal(err)
	}
	defer h.stop()
	server, client := connPair(t)
	left := make(chan struct{})
	forget, ok := h.watch(server, left)
	if !ok {
		t.Fatal("watch refused a TCP connection")
	}
	defer forget()
	_ = client.SetWriteDeadline(time.Now().Add(20 * time.Second))
	chunk := make([]byte, 64<<10)
	for range 512 { // 32 MiB, far past any socket buffer
		if _, err := client.Write(chunk); err != nil {
			t.Fatalf("the client's writes stopped: %v", err)
		}
	}
	select {
	case <-left:
		t.Fatal("a client that sent bytes was taken for gone")
	default:
	}
}

// TestHangupsStop: once stopped, nothing new is watched (the stream reads
// for itself), and forgetting one watched before is safe.
func TestHangupsStop(t *testing.T) {
	h, err := newHangups()
	if err != nil {
		t.Fatal(err)
	}
	server, _ := connPair(t)
	forget, ok := h.watch(server, make(chan struct{}))
	if !ok {
		t.Fatal("watch refused a TCP connection")
	}
	h.stop()
	h.stop()
	forget()
	other, _ := connPair(t)
	if _, ok := h.watch(other, make(chan struct{})); ok {
		t.Fatal("a stopped hangups took a connection")
	}
	select {
	case <-h.done:
	default:
		t.Fatal("stop returned with the loop running")
	}
}
