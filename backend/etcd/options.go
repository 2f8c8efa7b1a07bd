package etcd

import (
	"crypto/tls"
	"time"

	"github.com/httpkv/httpkv/auth"
	"github.com/httpkv/httpkv/watch"
)

// Defaults for Options fields left zero.
const (
	DefaultDialTimeout = 5 * time.Second
	// DefaultRequestTimeout bounds an etcd request while etcd serves:
	// it lets a large read take its time. Without a quorum, or with no
	// member reachable, requests fail within seconds instead (prober.go).
	DefaultRequestTimeout = 15 * time.Second
	DefaultMaxTxnOps      = 128
	DefaultWindowBytes    = 64 << 20
	// DefaultReadCacheBytes bounds the namespace's keys and values a
	// gateway holds to answer reads from memory.
	DefaultReadCacheBytes = 256 << 20
	// DefaultProgressInterval is how often an idle upstream watch asks
	// etcd how far it has got: the gateway's revision then follows
	// etcd's even while nothing in the namespace changes.
	DefaultProgressInterval = 5 * time.Second
	// DefaultStartTimeout bounds Open's wait for the cluster to answer.
	DefaultStartTimeout = 30 * time.Second
	// DefaultMaxHistoryWatches bounds the etcd watches requests open at
	// once to read history.
	DefaultMaxHistoryWatches = 64
)

// Options configure a gateway.
type Options struct {
	// Endpoints are the cluster's client URLs.
	Endpoints []string
	// Namespace is the key prefix in etcd under which the deployment
	// lives; empty for the whole key space.
	Namespace string
	// TLS, if not nil, is the TLS configuration towards etcd.
	TLS *tls.Config
	// Username and Password are the gateway's own etcd credentials, when
	// etcd has auth on.
	Username, Password string
	// DialTimeout bounds connecting to etcd; zero means
	// DefaultDialTimeout.
	DialTimeout time.Duration
	// RequestTimeout bounds each etcd request while etcd serves (a
	// member answers the gateway's probes: prober.go): past it the call
	// fails with kv.ErrUnavailable. While no member answers, calls fail at
	// once. Zero means DefaultRequestTimeout.
	RequestTimeout time.Duration
	// StartTimeout bounds how long Open waits for the cluster to answer
	// its first read. Zero means DefaultStartTimeout.
	StartTimeout time.Duration
	// MaxTxnOps bounds the compares, and the ops of each branch, of a
	// txn, checked before it is sent (etcd checks its own
	// --max-txn-ops). Zero means DefaultMaxTxnOps.
	MaxTxnOps int
	// MaxLeases bounds the leases of the namespace alive at once: past
	// it a grant fails with kv.ErrTooManyLeases (see leaseCounter). Zero
	// means no bound.
	MaxLeases int
	// MaxResponseBytes bounds the key and value bytes of one answer (a
	// range, or every range of a txn): larger answers fail with a
	// *kv.TooLargeError, refused as they arrive from etcd. Zero means no
	// bound.
	MaxResponseBytes int64
	// WindowBytes bounds the recent revisions held in memory for the
	// watchers that are behind; older ones are read from etcd. Zero means
	// DefaultWindowBytes.
	WindowBytes int64
	// ReadCacheBytes bounds the namespace's keys and values held in
	// memory to answer reads at the current revision (cache.go): a
	// namespace that outgrows it is read from etcd. Zero means
	// DefaultReadCacheBytes; negative, no cache.
	ReadCacheBytes int64
	// ProgressInterval is how often the idle upstream watch asks etcd for
	// a progress notification. Zero means DefaultProgressInterval.
	ProgressInterval time.Duration
	// ClusterMaintenance lets a gateway of a namespace compact,
	// defragment and disarm alarms: operations of the whole cluster,
	// which every deployment on it undergoes. Without it only a gateway
	// without a namespace, whose deployment has the cluster to itself,
	// runs them; the others answer kv.ErrNotSupported.
	ClusterMaintenance bool
	// MaxHistoryWatches bounds the etcd watches that requests open at
	// once to read history (etcd's watch is its only read of past
	// events): a page of GET /v1/history, or the compact revision asked.
	// Past it such a request fails with too_many_requests. Zero means
	// DefaultMaxHistoryWatches.
	MaxHistoryWatches int
	// Watch tunes the watch scheduler.
	Watch watch.Options
	// Auth tunes the auth store (token TTL, bcrypt cost).
	Auth auth.Config
}

func (o *Options) setDefaults() {
	if o.DialTimeout <= 0 {
		o.DialTimeout = DefaultDialTimeout
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	if o.MaxTxnOps <= 0 {
		o.MaxTxnOps = DefaultMaxTxnOps
	}
	if o.WindowBytes <= 0 {
		o.WindowBytes = DefaultWindowBytes
	}
	if o.ReadCacheBytes == 0 {
		o.ReadCacheBytes = DefaultReadCacheBytes
	}
	if o.ProgressInterval <= 0 {
		o.ProgressInterval = DefaultProgressInterval
	}
	if o.MaxHistoryWatches <= 0 {
		o.MaxHistoryWatches = DefaultMaxHistoryWatches
	}
}
