// Package metrics holds the Prometheus families of one API on a registry
// of its own (no global state): requests by route, method and status, and
// their latency, recorded as requests end; the backend's figures and the
// streams' read when scraped; and the Go runtime's.
//
// Every label comes from a fixed set, so that no client can make new
// series (a request with a 100 KB method once made one series per
// request).
package metrics

import (
	"net/http"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/httpkv/httpkv/kv"
)

// Backend is what the figures of the store are read from.
type Backend interface {
	Stats() kv.Stats
}

// Streams is what the figures of the streams of many watchers are read
// from.
type Streams interface {
	Len() int
	Parks() int64
	Buffered() int64
}

// Held reports how much of a bound is taken.
type Held func() int

// Metrics are the families of one API.
type Metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	// series caches the series each request records in, by its labels:
	// finding them in the families checks and hashes every label value,
	// twice, a good part of the CPU of a request that answers a key.
	series sync.Map // seriesKey -> *requestSeries
}

// seriesKey names a request's series; status is statusKey's.
type seriesKey struct {
	route, method string
	status        int
}

type requestSeries struct {
	requests prometheus.Counter
	latency  prometheus.Observer
}

// New returns the families of an API over b, whose streams of many
// watchers are streams; streamConns and watchers report what the streams
// and watchers hold against their bounds.
func New(b Backend, streams Streams, streamConns, watchers Held) *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "httpkv_http_requests_total",
			Help: "HTTP requests by route pattern, method and status; 499: the client left before its answer.",
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
		newBackendCollector(b),
		newStreamsCollector(streams, streamConns, watchers),
	)
	return m
}

// Observe records a request: route is a route pattern of the router or
// "unmatched", method a MethodLabel; status is labelled by statusLabel.
func (m *Metrics) Observe(route, method string, status int, seconds float64) {
	k := seriesKey{route: route, method: method, status: statusKey(status)}
	v, ok := m.series.Load(k)
	if !ok {
		v, _ = m.series.LoadOrStore(k, &requestSeries{
			requests: m.requests.WithLabelValues(route, method, statusLabel(status)),
			latency:  m.latency.WithLabelValues(route, method),
		})
	}
	rs := v.(*requestSeries)
	rs.requests.Inc()
	rs.latency.Observe(seconds)
}

// statusKey is status, or what stands for its label when the label is
// its class or "other": the statuses of one label share a key, so that
// the cache holds no more entries than the family series.
func statusKey(status int) int {
	if knownStatus(status) {
		return status
	}
	if status < 100 || status > 599 {
		return 0
	}
	return status / 100
}

// MethodLabel is the method, if it is one of HTTP's, or "other".
func MethodLabel(method string) string {
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
	if knownStatus(status) {
		return strconv.Itoa(status)
	}
	if status < 100 || status > 599 {
		return "other"
	}
	return strconv.Itoa(status/100) + "xx"
}

// knownStatus reports whether status is one the server answers with.
func knownStatus(status int) bool {
	switch status {
	case 200, 201, 204, 206, 301, 304, 400, 401, 403, 404, 405, 408, 409, 410, 412, 413, 416, 429, 499, 500, 503, 507:
		return true
	}
	return false
}

// Handler serves the families in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}
