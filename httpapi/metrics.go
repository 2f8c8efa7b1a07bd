package httpapi

import (
	"net/http"

	"github.com/httpkv/httpkv/httpapi/metrics"
)

// newMetrics returns the Prometheus families of h (package metrics).
func (h *Handler) newMetrics() *metrics.Metrics {
	return metrics.New(h.cfg.Backend, h.wstreams, h.streamConns.held, h.watchers.held)
}

// serveMetrics serves GET /metrics.
//
//	@Summary		Prometheus metrics
//	@Description	Request counts and latencies by route, store revisions and sizes, watchers, leases and the Go runtime, in the Prometheus text format. It needs no token.
//	@Tags			service
//	@ID				metrics
//	@Produce		plain
//	@Success		200	{string}	string	"The metrics in the Prometheus text exposition format."
//	@Router			/metrics [get]
func (h *Handler) serveMetrics() http.Handler {
	return h.metrics.Handler()
}
