package httpapi

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/httpkv/httpkv/stream/multi"
)

// streamsCollector reports the streams of many watchers, and what all
// streams and watchers hold against their bounds, read once per scrape.
type streamsCollector struct {
	g                     *multi.Registry
	streamConns, watchers *quota
	streams, parked       *prometheus.Desc
	buffered              *prometheus.Desc
	open, watching        *prometheus.Desc
}

func newStreamsCollector(g *multi.Registry, streamConns, watchers *quota) *streamsCollector {
	return &streamsCollector{
		g: g, streamConns: streamConns, watchers: watchers,
		streams: prometheus.NewDesc("httpkv_watch_streams", "Streams of many watchers (/v1/watch/streams).", nil, nil),
		parked: prometheus.NewDesc("httpkv_watch_stream_parks_total",
			"Watchers of streams of many watchers that had to catch up from history: their stream held --watch-stream-buffer-bytes unwritten, or all streams --watch-stream-buffer-total-bytes.", nil, nil),
		buffered: prometheus.NewDesc("httpkv_watch_stream_buffered_bytes",
			"Bytes the buffers of streams of many watchers hold, as counted against --watch-stream-buffer-total-bytes.", nil, nil),
		open: prometheus.NewDesc("httpkv_stream_connections",
			"Streams open, each holding a connection (single watches, readers of streams of many watchers, observers), as counted against --max-stream-connections.", nil, nil),
		watching: prometheus.NewDesc("httpkv_watchers_admitted",
			"Watchers admitted: single watches, observers and the live watchers of streams of many watchers, as counted against --max-watchers.", nil, nil),
	}
}

func (c *streamsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.streams
	ch <- c.parked
	ch <- c.buffered
	ch <- c.open
	ch <- c.watching
}

func (c *streamsCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(c.streams, prometheus.GaugeValue, float64(c.g.Len()))
	ch <- prometheus.MustNewConstMetric(c.parked, prometheus.CounterValue, float64(c.g.Parks()))
	ch <- prometheus.MustNewConstMetric(c.buffered, prometheus.GaugeValue, float64(c.g.Buffered()))
	ch <- prometheus.MustNewConstMetric(c.open, prometheus.GaugeValue, float64(c.streamConns.held()))
	ch <- prometheus.MustNewConstMetric(c.watching, prometheus.GaugeValue, float64(c.watchers.held()))
}
