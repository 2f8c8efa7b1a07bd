package metrics

import (
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestLabels: a status or method the server does not answer with falls
// into a class, so that clients cannot make new series.
func TestLabels(t *testing.T) {
	for _, tt := range []struct {
		status int
		want   string
	}{{200, "200"}, {429, "429"}, {499, "499"}, {418, "4xx"}, {599, "5xx"}, {999, "other"}, {0, "other"}} {
		if got := statusLabel(tt.status); got != tt.want {
			t.Errorf("statusLabel(%d) = %q, want %q", tt.status, got, tt.want)
		}
	}
	for method, want := range map[string]string{"GET": "GET", "PATCH": "PATCH", "get": "other", "BREW": "other"} {
		if got := MethodLabel(method); got != want {
			t.Errorf("MethodLabel(%q) = %q, want %q", method, got, want)
		}
	}
}

// TestObserveSeries: requests are counted in the series of their labels,
// those whose status falls into one class in one series, and the cache
// of series holds one entry per series.
func TestObserveSeries(t *testing.T) {
	m := New(nil, nil, nil, nil)
	for _, status := range []int{200, 200, 418, 419, 999} {
		m.Observe("/v1/kv/*", "PUT", status, 0.001)
	}
	// The families alone: m's registry also reads the backend's figures.
	r := prometheus.NewRegistry()
	r.MustRegister(m.requests, m.latency)
	families, err := r.Gather()
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]float64{}
	latencies := 0
	for _, f := range families {
		switch f.GetName() {
		case "httpkv_http_requests_total":
			for _, s := range f.GetMetric() {
				for _, l := range s.GetLabel() {
					if l.GetName() == "status" {
						counts[l.GetValue()] += s.GetCounter().GetValue()
					}
				}
			}
		case "httpkv_http_request_duration_seconds":
			latencies = len(f.GetMetric())
		}
	}
	if want := map[string]float64{"200": 2, "4xx": 2, "other": 1}; fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Errorf("requests by status: %v, want %v", counts, want)
	}
	if latencies != 1 {
		t.Errorf("latency series: %d, want 1", latencies)
	}
	n := 0
	m.series.Range(func(any, any) bool { n++; return true })
	if n != 3 {
		t.Errorf("cached series: %d, want 3", n)
	}
}
