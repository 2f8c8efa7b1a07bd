package httpapi

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/httpkv/httpkv/backend/embedded"
	"github.com/httpkv/httpkv/internal/storetest"
	"github.com/httpkv/httpkv/internal/waittest"
	"github.com/httpkv/httpkv/watch"
)

// TestWatchStalledStreamsBounded opens watch streams whose clients send
// their request and never read, and writes puts of 64 KiB: what the
// watch store holds for all of them stays within its bound for all
// watchers (MaxPendingBytes, --max-watch-pending-bytes) and one revision
// per stream, instead of each stream's own bound (1 MiB) times their
// number; and a client that reads gets every put, in order, while they
// stall.
func TestWatchStalledStreamsBounded(t *testing.T) {
	const (
		stalled = 40
		puts    = 100
		value   = 64 << 10
		total   = 2 << 20
	)
	b := storetest.Open(t, embedded.Options{Watch: watch.Options{MaxPendingBytes: total}})
	h := NewHandler(b, nil, zerolog.Nop(), Config{KeepAliveInterval: time.Hour})
	srv := httptest.NewServer(h)
	tr := &http.Transport{}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		srv.Close()
		h.Close()
	})
	addr := strings.TrimPrefix(srv.URL, "http://")
	conns := make([]net.Conn, 0, stalled)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range stalled {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("Dial(%s): %v", addr, err)
		}
		conns = append(conns, c)
		_ = c.(*net.TCPConn).SetReadBuffer(4 << 10)
		if _, err := c.Write([]byte("GET /v1/watch?key=k&prefix=true HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
			t.Fatalf("writing a watch request: %v", err)
		}
	}
	reader := openWatch(t, &http.Client{Transport: tr}, srv, "/v1/watch?key=k&prefix=true")
	expectCreated(t, reader)
	if !waittest.For(streamTimeout, func() bool { return b.Stats().Watchers.Synced == stalled+1 }) {
		t.Fatalf("watchers %+v, want %d synced", b.Stats().Watchers, stalled+1)
	}

	// What the store may hold: its bound, and one revision for each
	// stream (a watcher holding nothing always takes one).
	limit := int64(total + (stalled+1)*(value+1024))
	v := strings.Repeat("v", value)
	var most int64
	for i := range puts {
		mustServe(t, h, http.StatusOK, "PUT", fmt.Sprintf("/v1/kv/k%03d", i), v)
		st := b.Stats().Watchers
		most = max(most, st.PendingBytes)
		if st.PendingBytes > limit {
			t.Fatalf("after %d puts of %d bytes, watchers %+v: PendingBytes past the bound %d and one revision per stream (%d)", i+1, value, st, total, limit)
		}
		// The reader keeps up: every put, in order.
		expectPuts(t, reader, fmt.Sprintf("k%03d", i))
	}
	st := b.Stats().Watchers
	t.Logf("%d stalled streams, %d puts of %d bytes: the store held at most %d bytes (bound %d, without it %d each); watchers %+v",
		stalled, puts, value, most, total, watch.DefaultQueueBytes, st)

	// The stalled clients leave: nothing is held for them any more.
	for _, c := range conns {
		c.Close()
	}
	if !waittest.For(streamTimeout, func() bool {
		st = b.Stats().Watchers
		return st.PendingBytes == 0 && st.Synced+st.Unsynced+st.Victims == 1
	}) {
		t.Fatalf("watchers %+v after the stalled clients left, want one and nothing pending", st)
	}
}
