package tests

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/tests/e2e"
)

// TestMetricsFamilies scrapes /metrics while a watcher is open, after
// writes, a lease and a compaction, and checks every family the server
// promises is there with live values.
func TestMetricsFamilies(t *testing.T) {
	s := e2e.StartServer(t)
	w := e2e.OpenWatch(t, s, "key=m/&prefix=true")
	defer w.Close()
	for i := range 5 {
		s.Put(t, "m/"+strconv.Itoa(i), "v")
	}
	for range 5 {
		w.NextData(e2e.WatchTimeout)
	}
	s.Do(t, "POST", "/v1/leases", []byte(`{"ttl":60}`)).Want(t, 201)
	rev := s.Put(t, "m/last", "v")
	w.NextData(e2e.WatchTimeout)
	s.Do(t, "POST", "/v1/compact", []byte(`{"revision":`+strconv.FormatInt(rev-1, 10)+`}`)).Want(t, 200)

	r := s.Do(t, "GET", "/metrics", nil).Want(t, 200)
	samples := e2e.ParseMetrics(r.Body)
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

// TestMetricsLabelsBounded sends 50 requests with methods of 20 KB and
// paths the API does not have: they count under the labels "other" and
// "unmatched", so /metrics stays small instead of growing a series, and
// 20 KB, per request.
func TestMetricsLabelsBounded(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	for i := range 50 {
		method := strings.Repeat("M", 20<<10) + strconv.Itoa(i)
		r := s.Do(t, method, "/v1/kv/k", nil)
		if r.Status != http.StatusMethodNotAllowed {
			t.Fatalf("%.20s... /v1/kv/k = %d, want 405", method, r.Status)
		}
		s.Do(t, "GET", "/no/such/route/"+strconv.Itoa(i), nil).Want(t, http.StatusNotFound)
	}
	r := s.Do(t, "GET", "/metrics", nil).Want(t, http.StatusOK)
	t.Logf("GET /metrics is %d KiB after 100 odd requests", len(r.Body)>>10)
	if len(r.Body) > 256<<10 {
		t.Errorf("GET /metrics is %d KiB after 100 odd requests, want at most 256", len(r.Body)>>10)
	}
	samples := e2e.ParseMetrics(r.Body)
	for name, want := range map[string]float64{
		`httpkv_http_requests_total{method="other",route="unmatched",status="405"}`: 50,
		`httpkv_http_requests_total{method="GET",route="unmatched",status="404"}`:   50,
	} {
		if got := samples[name]; got != want {
			t.Errorf("GET /metrics: %s = %v, want %v", name, got, want)
		}
	}
}
