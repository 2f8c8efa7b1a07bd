package e2e

import (
	"net/http"
	"testing"
	"time"
)

// attackFigures samples the server's resident memory and what it counts
// against its bounds on watch buffers, every 100 ms for d.
type attackFigures struct {
	RSS, Buffered, Pending float64 // the most seen
}

func (s *Server) SampleFor(tb testing.TB, d time.Duration) attackFigures {
	tb.Helper()
	var f attackFigures
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		m := ParseMetrics(s.Do(tb, "GET", "/metrics", nil).Want(tb, http.StatusOK).Body)
		f.RSS = max(f.RSS, float64(s.RSS(tb)))
		f.Buffered = max(f.Buffered, m["httpkv_watch_stream_buffered_bytes"])
		f.Pending = max(f.Pending, m["httpkv_watch_pending_bytes"])
	}
	return f
}

// WaitStreams waits until the server counts n streams open.
func (s *Server) WaitStreams(tb testing.TB, n int) {
	tb.Helper()
	deadline := time.Now().Add(WatchTimeout)
	for s.Metric(tb, "httpkv_stream_connections") != float64(n) {
		if time.Now().After(deadline) {
			tb.Fatalf("%v streams open, want %d", s.Metric(tb, "httpkv_stream_connections"), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
