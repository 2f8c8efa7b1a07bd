package tests

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/httpkv/httpkv/tests/e2e"
)

// TestShutdownStalledWatchers opens two watch streams over HTTPS, one over
// HTTP/2 and one over HTTP/1.1, reads them until they are created and
// then stops reading, while 8 MiB of events pile up for them (more than
// an HTTP/2 stream's window and the sockets' buffers take). SIGTERM must
// then end the process, cleanly, within --shutdown-grace and a margin for
// closing the store, whatever the stalled clients do.
func TestShutdownStalledWatchers(t *testing.T) {
	t.Parallel()
	const grace = 2 * time.Second
	srv := startTLSServer(t, fmt.Sprintf("--shutdown-grace=%v", grace))
	h2 := srv.client(true)
	h2.Timeout = e2e.RequestTimeout
	e2e.Eventually(t, e2e.ServerStartTimeout, func() (bool, string) {
		resp, err := h2.Get(srv.base + "/health")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, "GET /health: " + resp.Status
	})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, tt := range []struct {
		name  string
		http2 bool
	}{{"HTTP/2.0", true}, {"HTTP/1.1", false}} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.base+"/v1/watch?key=big/&prefix=true", nil)
		resp, err := srv.client(tt.http2).Do(req)
		if err != nil || resp.StatusCode != http.StatusOK || resp.Proto != tt.name {
			t.Fatalf("watch over %s = %v, %v", tt.name, resp, err)
		}
		// Read up to the created message, and no further.
		waitLine(t, tt.name, bufio.NewReaderSize(resp.Body, 16), "event: created")
	}
	value := bytes.Repeat([]byte("v"), 1<<20)
	for i := range 8 {
		req, _ := http.NewRequest(http.MethodPut, fmt.Sprintf("%s/v1/kv/big/%d", srv.base, i), bytes.NewReader(value))
		resp, err := h2.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("PUT big/%d = %v, %v", i, resp, err)
		}
		resp.Body.Close()
	}

	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	const margin = 10 * time.Second
	sent := time.Now()
	select {
	case err := <-srv.exited:
		t.Logf("httpkv exited %v after SIGTERM (--shutdown-grace %v)", time.Since(sent).Round(10*time.Millisecond), grace)
		if err != nil {
			t.Errorf("httpkv exited after SIGTERM with %v, want status 0", err)
		}
	case <-time.After(grace + margin):
		t.Fatalf("httpkv did not exit within --shutdown-grace %v and %v more of SIGTERM, with two watchers that stopped reading", grace, margin)
	}
}
