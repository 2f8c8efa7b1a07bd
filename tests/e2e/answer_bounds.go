package e2e

import (
	"net/http"
	"testing"
)

// Metric returns one sample of the server's /metrics, which must be
// there.
func (s *Server) Metric(tb testing.TB, name string) float64 {
	tb.Helper()
	v, ok := ParseMetrics(s.Do(tb, "GET", "/metrics", nil).Want(tb, http.StatusOK).Body)[name]
	if !ok {
		tb.Fatalf("GET /metrics has no sample %s", name)
	}
	return v
}

// AllocatedBy returns the bytes the server allocated on its heap while fn
// ran (with a scrape of /metrics on each side).
func (s *Server) AllocatedBy(tb testing.TB, fn func()) float64 {
	tb.Helper()
	before := s.Metric(tb, "go_memstats_alloc_bytes_total")
	fn()
	return s.Metric(tb, "go_memstats_alloc_bytes_total") - before
}
