package httpapi

import "github.com/prometheus/client_golang/prometheus"

// streamsCollector reports the streams of many watchers, read once per
// scrape.
type streamsCollector struct {
	g               *streamRegistry
	streams, parked *prometheus.Desc
	buffered        *prometheus.Desc
}

func newStreamsCollector(g *streamRegistry) *streamsCollector {
	return &streamsCollector{
		g:       g,
		streams: prometheus.NewDesc("httpkv_watch_streams", "Streams of many watchers (/v1/watch/streams).", nil, nil),
		parked: prometheus.NewDesc("httpkv_watch_stream_parks_total",
			"Watchers of streams of many watchers that had to catch up from history: their stream held --watch-stream-buffer-bytes unwritten.", nil, nil),
		buffered: prometheus.NewDesc("httpkv_watch_stream_buffered_bytes",
			"Bytes the buffers of streams of many watchers hold, as counted against --watch-stream-buffer-total-bytes.", nil, nil),
	}
}

func (c *streamsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.streams
	ch <- c.parked
	ch <- c.buffered
}

func (c *streamsCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(c.streams, prometheus.GaugeValue, float64(c.g.len()))
	ch <- prometheus.MustNewConstMetric(c.parked, prometheus.CounterValue, float64(c.g.parks.Load()))
	ch <- prometheus.MustNewConstMetric(c.buffered, prometheus.GaugeValue, float64(c.g.buffered.Load()))
}
