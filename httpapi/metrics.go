package httpapi

import (
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the Prometheus families of one Handler, on a registry of
// its own (no global state). Request figures are recorded as requests
// end; store figures are read when scraped.
type metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

func (h *Handler) newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "httpkv_http_requests_total",
			Help: "HTTP requests by route pattern, method and status.",
		}, []string{"route", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "httpkv_http_request_duration_seconds",
			Help:    "HTTP request latency by route pattern and method; a watch stream counts until it takes its HTTP/1 connection over, or its whole life over HTTP/2.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10),
		}, []string{"route", "method"}),
	}
	kv := h.cfg.KV
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f)
	}
	watchers := prometheus.NewDesc("httpkv_watchers", "Watchers by group.", []string{"group"}, nil)
	m.registry.MustRegister(
		m.requests, m.latency,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		gauge("httpkv_revision", "The store's current revision.", func() float64 { return float64(kv.Rev()) }),
		gauge("httpkv_compact_revision", "The store's compact revision.", func() float64 { return float64(kv.CompactRev()) }),
		gauge("httpkv_db_size_bytes", "Size of the backend.", func() float64 { size, _ := kv.DBSize(); return float64(size) }),
		gauge("httpkv_db_size_in_use_bytes", "Size of the backend less its free pages.", func() float64 { _, inUse := kv.DBSize(); return float64(inUse) }),
		gauge("httpkv_alarms", "Active alarms (NOSPACE).", func() float64 { return float64(len(kv.Alarms())) }),
		gauge("httpkv_watch_pending_events", "Events queued for watchers and not yet read.", func() float64 {
			return float64(h.cfg.Store.Stats().PendingEvents)
		}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "httpkv_watch_events_sent_total", Help: "Events read by watchers."},
			func() float64 { return float64(h.cfg.Store.Stats().EventsSent) }),
		gauge("httpkv_leases", "Leases granted and not yet revoked.", func() float64 {
			if h.cfg.Leases == nil {
				return 0
			}
			return float64(len(h.cfg.Leases.List()))
		}),
		collectorFunc{descs: []*prometheus.Desc{watchers}, collect: func(ch chan<- prometheus.Metric) {
			st := h.cfg.Store.Stats()
			for group, n := range map[string]int{"synced": st.Synced, "unsynced": st.Unsynced, "victims": st.Victims} {
				ch <- prometheus.MustNewConstMetric(watchers, prometheus.GaugeValue, float64(n), group)
			}
		}},
	)
	return m
}

// collectorFunc is a Collector from a function.
type collectorFunc struct {
	descs   []*prometheus.Desc
	collect func(chan<- prometheus.Metric)
}

func (c collectorFunc) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

func (c collectorFunc) Collect(ch chan<- prometheus.Metric) { c.collect(ch) }

// observe records a request. Every label comes from a fixed set, so that
// no client can make new series (a request with a 100 KB method once made
// one series per request): route is a route pattern of the router or
// "unmatched", method a methodLabel, status one statusLabel knows.
func (m *metrics) observe(route, method string, status int, seconds float64) {
	m.requests.WithLabelValues(route, method, statusLabel(status)).Inc()
	m.latency.WithLabelValues(route, method).Observe(seconds)
}

// methodLabel is the method, if it is one of HTTP's, or "other".
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return method
	}
	return "other"
}

// statusLabel is the status code, if it is one the server answers with,
// or its class ("5xx").
func statusLabel(status int) string {
	switch status {
	case 200, 201, 204, 206, 301, 304, 400, 401, 403, 404, 405, 408, 409, 410, 412, 413, 416, 429, 500, 503, 507:
		return strconv.Itoa(status)
	}
	if status < 100 || status > 599 {
		return "other"
	}
	return strconv.Itoa(status/100) + "xx"
}

// handler serves GET /metrics.
//
//	@Summary		Prometheus metrics
//	@Description	Request counts and latencies by route, store revisions and sizes, watchers, leases and the Go runtime, in the Prometheus text format. It needs no token.
//	@Tags			service
//	@ID				metrics
//	@Produce		plain
//	@Success		200	{string}	string	"The metrics in the Prometheus text exposition format."
//	@Router			/metrics [get]
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}
