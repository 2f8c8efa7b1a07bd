package tests

import (
	"bufio"
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestMetricsFamilies scrapes /metrics while a watcher is open, after
// writes, a lease and a compaction, and checks every family the server
// promises is there with live values.
func TestMetricsFamilies(t *testing.T) {
	s := startServer(t)
	w := openWatch(t, s, "key=m/&prefix=true")
	defer w.close()
	for i := range 5 {
		s.put(t, "m/"+strconv.Itoa(i), "v")
	}
	for range 5 {
		w.nextData(watchTimeout)
	}
	s.do(t, "POST", "/v1/leases", []byte(`{"ttl":60}`)).want(t, 201)
	rev := s.put(t, "m/last", "v")
	w.nextData(watchTimeout)
	s.do(t, "POST", "/v1/compact", []byte(`{"revision":`+strconv.FormatInt(rev-1, 10)+`}`)).want(t, 200)

	r := s.do(t, "GET", "/metrics", nil).want(t, 200)
	samples := parseMetrics(r.body)
	tests := []struct {
		name string
		want func(v float64) bool
		what string
	}{
		{`httpkv_http_requests_total{method="PUT",route="/v1/kv/*",status="200"}`, func(v float64) bool { return v >= 6 }, ">= 6"},
		{`httpkv_http_request_duration_seconds_count{method="PUT",route="/v1/kv/*"}`, func(v float64) bool { return v >= 6 }, ">= 6"},
		{`httpkv_watchers{group="synced"}`, func(v float64) bool { return v >= 1 }, ">= 1"},
		{`httpkv_watchers{group="unsynced"}`, func(v float64) bool { return v >= 0 }, "present"},
		{`httpkv_watchers{group="victims"}`, func(v float64) bool { return v >= 0 }, "present"},
		{`httpkv_watch_pending_events`, func(v float64) bool { return v >= 0 }, "present"},
		{`httpkv_watch_pending_bytes`, func(v float64) bool { return v >= 0 }, "present"},
		{`httpkv_watch_stream_buffered_bytes`, func(v float64) bool { return v >= 0 }, "present"},
		{`httpkv_watch_events_sent_total`, func(v float64) bool { return v >= 6 }, ">= 6"},
		{`httpkv_revision`, func(v float64) bool { return v == float64(rev) }, "the current revision"},
		{`httpkv_compact_revision`, func(v float64) bool { return v == float64(rev-1) }, "the compact revision"},
		{`httpkv_db_size_bytes`, func(v float64) bool { return v > 0 }, "> 0"},
		{`httpkv_db_size_in_use_bytes`, func(v float64) bool { return v > 0 }, "> 0"},
		{`httpkv_leases`, func(v float64) bool { return v == 1 }, "1"},
		{`httpkv_alarms`, func(v float64) bool { return v == 0 }, "0"},
	}
	for _, tt := range tests {
		v, ok := samples[tt.name]
		if !ok {
			t.Errorf("GET /metrics has no sample %s", tt.name)
			continue
		}
		if !tt.want(v) {
			t.Errorf("GET /metrics: %s = %v, want %s", tt.name, v, tt.what)
		}
	}
}

// parseMetrics reads the Prometheus text format into sample name (with
// its labels as written) -> value.
func parseMetrics(b []byte) map[string]float64 {
	out := make(map[string]float64)
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err == nil {
			out[line[:i]] = v
		}
	}
	return out
}

// TestMetricsLabelsBounded sends 50 requests with methods of 20 KB and
// paths the API does not have: they count under the labels "other" and
// "unmatched", so /metrics stays small instead of growing a series, and
// 20 KB, per request.
func TestMetricsLabelsBounded(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	for i := range 50 {
		method := strings.Repeat("M", 20<<10) + strconv.Itoa(i)
		r := s.do(t, method, "/v1/kv/k", nil)
		if r.status != http.StatusMethodNotAllowed {
			t.Fatalf("%.20s... /v1/kv/k = %d, want 405", method, r.status)
		}
		s.do(t, "GET", "/no/such/route/"+strconv.Itoa(i), nil).want(t, http.StatusNotFound)
	}
	r := s.do(t, "GET", "/metrics", nil).want(t, http.StatusOK)
	t.Logf("GET /metrics is %d KiB after 100 odd requests", len(r.body)>>10)
	if len(r.body) > 256<<10 {
		t.Errorf("GET /metrics is %d KiB after 100 odd requests, want at most 256", len(r.body)>>10)
	}
	samples := parseMetrics(r.body)
	for name, want := range map[string]float64{
		`httpkv_http_requests_total{method="other",route="unmatched",status="405"}`: 50,
		`httpkv_http_requests_total{method="GET",route="unmatched",status="404"}`:   50,
	} {
		if got := samples[name]; got != want {
			t.Errorf("GET /metrics: %s = %v, want %v", name, got, want)
		}
	}
}
