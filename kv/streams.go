package kv

// A backend whose gateways share the records of the streams of many
// watchers (backend/etcd) counts what those records hold for the whole
// deployment: their watchers are the deployment's whether or not a
// gateway serves them, so the bounds on watchers hold there, not in one
// gateway's memory.

// StreamCounts is what the deployment's stream records hold, in all and
// for one group (what a stream counts against: its owner), as of
// revision AsOf.
type StreamCounts struct {
	Streams, GroupStreams   int64
	Watchers, GroupWatchers int64
	AsOf                    int64
}

// StreamWatchers is what a change of a stream record does to its count
// of watchers.
type StreamWatchers struct {
	// Live is the record's live watchers after the change; negative when
	// the change leaves them as they were.
	Live int
	// AsOf, when not 0, makes the change conditional: it is made only if
	// no stream's count changed after revision AsOf (that of the
	// StreamCounts the change was checked against), so that changes made
	// through two gateways at once never pass a bound together.
	AsOf int64
}
