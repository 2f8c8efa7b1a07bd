package metrics

import "github.com/prometheus/client_golang/prometheus"

// backendCollector reports the backend's figures, read once per scrape.
type backendCollector struct {
	b                           Backend
	revision, compactRevision   *prometheus.Desc
	dbSize, dbSizeInUse, alarms *prometheus.Desc
	pendingEvents, eventsSent   *prometheus.Desc
	pendingBytes                *prometheus.Desc
	leases, watchers            *prometheus.Desc
	cacheKeys, cacheBytes       *prometheus.Desc
	cacheReads, cacheChecks     *prometheus.Desc
}

func newBackendCollector(b Backend) *backendCollector {
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
		cacheKeys:       desc("httpkv_read_cache_keys", "Keys a gateway's read cache holds (0 while it is not ready)."),
		cacheBytes:      desc("httpkv_read_cache_bytes", "Bytes of keys and values a gateway's read cache holds, as counted against --etcd-read-cache-bytes."),
		cacheReads:      desc("httpkv_read_cache_reads_total", "Reads a gateway answered from its read cache."),
		cacheChecks:     desc("httpkv_read_cache_checks_total", "Reads of etcd's current revision a gateway made for the reads it answered from its cache, one per batch."),
	}
}

func (c *backendCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.revision, c.compactRevision, c.dbSize, c.dbSizeInUse, c.alarms,
		c.pendingEvents, c.pendingBytes, c.eventsSent, c.leases, c.watchers,
		c.cacheKeys, c.cacheBytes, c.cacheReads, c.cacheChecks} {
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
	if rc := st.ReadCache; rc != nil {
		gauge(c.cacheKeys, float64(rc.Keys))
		gauge(c.cacheBytes, float64(rc.Bytes))
		ch <- prometheus.MustNewConstMetric(c.cacheReads, prometheus.CounterValue, float64(rc.Reads))
		ch <- prometheus.MustNewConstMetric(c.cacheChecks, prometheus.CounterValue, float64(rc.Checks))
	}
}

// streamsCollector reports the streams of many watchers, and what all
// streams and watchers hold against their bounds, read once per scrape.
type streamsCollector struct {
	g                     Streams
	streamConns, watchers Held
	streams, parked       *prometheus.Desc
	buffered              *prometheus.Desc
	open, watching        *prometheus.Desc
}

func newStreamsCollector(g Streams, streamConns, watchers Held) *streamsCollector {
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
	ch <- prometheus.MustNewConstMetric(c.open, prometheus.GaugeValue, float64(c.streamConns()))
	ch <- prometheus.MustNewConstMetric(c.watching, prometheus.GaugeValue, float64(c.watchers()))
}
