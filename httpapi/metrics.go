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
	m.registry.MustRegister(
		m.requests, m.latency,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		newBackendCollector(h.cfg.Backend),
		newStreamsCollector(h.wstreams, h.streamConns, h.watchers),
	)
	return m
}

// backendCollector reports the backend's figures, read once per scrape.
type backendCollector struct {
	b                           Monitor
	revision, compactRevision   *prometheus.Desc
	dbSize, dbSizeInUse, alarms *prometheus.Desc
	pendingEvents, eventsSent   *prometheus.Desc
	pendingBytes                *prometheus.Desc
	leases, watchers            *prometheus.Desc
}

func newBackendCollector(b Monitor) *backendCollector {
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	return &backendCollector{
		b:               b,
		revision:        desc("httpkv_revision", "The store's current revision."),
		compactRevision: desc("httpkv_compact_revision", "The store's compact revision."),
		dbSize:          desc("httpkv_db_size_bytes", "Size of the backend."),
		dbSizeInUse:     desc("httpkv_db_size_in_use_bytes", "Size of the backend less its free pages."),
		alarms:          desc("httpkv_alarms", "Active alarms (NOSPACE)."),
		pendingEvents:   desc("httpkv_watch_pending_events", "Events queued for watchers and not yet read."),
		pendingBytes:    desc("httpkv_watch_pending_bytes", "Bytes of events held for watchers (queued, or being written to their clients), as counted against --max-watch-pending-bytes."),
		eventsSent:      desc("httpkv_watch_events_sent_total", "Events read by watchers."),
		leases:          desc("httpkv_leases", "Leases granted and not yet revoked."),
		watchers:        desc("httpkv_watchers", "Watchers by group.", "group"),
	}
}

func (c *backendCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.revision, c.compactRevision, c.dbSize, c.dbSizeInUse, c.alarms,
		c.pendingEvents, c.pendingBytes, c.eventsSent, c.leases, c.watchers} {
		ch <- d
	}
}

func (c *backendCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.b.Stats()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	gauge(c.revision, float64(st.Revision))
	gauge(c.compactRevision, float64(st.CompactRevision))
	gauge(c.dbSize, float64(st.DBSize))
	gauge(c.dbSizeInUse, float64(st.DBSizeInUse))
	gauge(c.alarms, float64(len(st.Alarms)))
	gauge(c.pendingEvents, float64(st.Watchers.PendingEvents))
	gauge(c.pendingBytes, float64(st.Watchers.PendingBytes))
	ch <- prometheus.MustNewConstMetric(c.eventsSent, prometheus.CounterValue, float64(st.Watchers.EventsSent))
	gauge(c.leases, float64(st.Leases))
	for group, n := range map[string]int{"synced": st.Watchers.Synced, "unsynced": st.Watchers.Unsynced, "victims": st.Watchers.Victims} {
		gauge(c.watchers, float64(n), group)
	}
}

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
