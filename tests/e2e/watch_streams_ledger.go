package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// WatchSpec is a watch as a stream takes it (JSON) and the history query
// of what it delivers.
type WatchSpec struct {
	Body, History string
}

// From returns the spec starting at revision rev.
func (w WatchSpec) From(rev int64) WatchSpec {
	sep := func(s string) string {
		if s == "" {
			return ""
		}
		return ","
	}
	inner := strings.TrimSuffix(strings.TrimPrefix(w.Body, "{"), "}")
	q := w.History
	if q != "" {
		q += "&"
	}
	return WatchSpec{
		Body:    fmt.Sprintf(`{%s%s"start_revision":%d}`, inner, sep(inner), rev),
		History: fmt.Sprintf("%sstart_revision=%d", q, rev),
	}
}

// Expected returns what a watch of spec, started at start, delivers up
// to revision end, from GET /v1/history.
func (s *Server) Expected(tb testing.TB, spec WatchSpec, start, end int64) []string {
	tb.Helper()
	q := spec.History
	if !strings.Contains(q, "start_revision=") {
		q = strings.TrimPrefix(q+fmt.Sprintf("&start_revision=%d", start), "&")
	}
	evs, _ := s.HistoryPages(tb, strings.TrimPrefix(q+fmt.Sprintf("&end_revision=%d&limit=10000", end), "&"), nil)
	return evs
}
