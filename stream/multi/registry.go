package multi

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"sync"
	"sync/atomic"
	"time"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
)

// Defaults of Config.
const (
	DefaultIdleTimeout       = 60 * time.Second
	DefaultMaxStreams        = 10000
	DefaultMaxStreamsPerUser = 32
	DefaultMaxWatchers       = 10000
	DefaultBufferBytes       = 4 << 20
	DefaultTotalBufferBytes  = 256 << 20
	DefaultResumeBytes       = 4 << 20
	streamIDBytes            = 16
)

// Config bounds the streams of many watchers
// (/v1/watch/streams): every cost a client can make the server bear is
// bounded by one of these.
type Config struct {
	// IdleTimeout: a stream that has had no connection this long is
	// dropped.
	IdleTimeout time.Duration
	// MaxStreams bounds the streams of the server; MaxStreamsPerUser
	// those of one user, or, with auth off, of one client address.
	MaxStreams, MaxStreamsPerUser int
	// MaxWatchers bounds the watchers of one stream.
	MaxWatchers int
	// BufferBytes bounds what a stream holds encoded and not yet written
	// (the one take that crosses it included): past it, watchers are
	// replayed from history once the reader has caught up.
	BufferBytes int64
	// TotalBufferBytes bounds the buffers all streams hold together:
	// pending, being written, and kept for the next writes (counted at
	// their capacity), and the large events they share (counted once,
	// as encoded). A take is counted before it is encoded; one that does
	// not fit is not taken, whatever the stream holds: its watcher is
	// parked and catches up from history once there is room, and what
	// streams whose readers have stalled hold is let go of (their
	// connections cut; their clients resume with Last-Event-ID). Only
	// while all streams hold less than a sixteenth of it does a take
	// larger than what is left go through.
	TotalBufferBytes int64
	// ResumeBytes is how much of what a stream wrote its log remembers,
	// so that a client reconnecting with Last-Event-ID resumes exactly.
	ResumeBytes int64
}

func (c *Config) setDefaults() {
	orDefault(&c.IdleTimeout, DefaultIdleTimeout)
	orDefault(&c.MaxStreams, DefaultMaxStreams)
	orDefault(&c.MaxStreamsPerUser, DefaultMaxStreamsPerUser)
	orDefault(&c.MaxWatchers, DefaultMaxWatchers)
	orDefault(&c.BufferBytes, DefaultBufferBytes)
	orDefault(&c.TotalBufferBytes, DefaultTotalBufferBytes)
	orDefault(&c.ResumeBytes, DefaultResumeBytes)
}

// orDefault sets *v to def unless it is positive.
func orDefault[T int | int64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// TooManyWatchers is the refusal of a stream past its n watchers.
func TooManyWatchers(n int) error { return &LimitError{Limit: LimitWatchers, Max: n} }

// Backend is where watchers watch: the API's backend, as the engine uses
// it.
type Backend interface {
	Watch(ctx context.Context, req kv.WatchRequest) (kv.WatchStream, error)
}

// Authority decides again, while streams are open, whether their owners
// may still have them and read what their watchers read: httpapi's
// authorizer, as the engine needs it.
type Authority interface {
	// Changed is signalled when users, roles or the enabled flag change.
	Changed() <-chan struct{}
	// Recheck decides for the owner o as things stand now, without a
	// token, whether it may still have its streams (no ranges), or read
	// every range of read; the error says why not.
	Recheck(o Owner, read ...keyrange.Range) error
	// Reason is the canceled message's reason for an error of Recheck,
	// or for what a stream loop ended a connection for (stream.Guard).
	Reason(err error) string
}

// Quota counts the live watchers of the streams against the bound for
// all watchers of the server, which single watches count against too,
// and each owner's share of it (key).
type Quota interface {
	// Acquire counts n more watchers for key, or says why not.
	Acquire(key string, n int) error
	// Release gives back n watchers of key.
	Release(key string, n int)
	// Recorded checks n more watchers against the counts of the
	// deployment's records (shared streams, whose watchers are counted
	// there rather than here).
	Recorded(c kv.StreamCounts, n int) error
}

// Registry holds the streams of many watchers of a server and owns
// their goroutines: Close stops them and waits.
type Registry struct {
	cfg     Config
	backend Backend
	auth    Authority // nil: every owner may read everything, always

	// store keeps the streams' records where every gateway of the
	// deployment reads them; nil when streams are this server's own.
	store Store
	// openMu serialises the making of instances of shared streams: two
	// connections of one stream arriving at once make one.
	openMu sync.Mutex

	mu      sync.Mutex // guards the fields below; never held while taking a stream's
	streams map[string]*Stream
	perKey  map[string]int
	closed  bool

	wg    sync.WaitGroup // the collectors
	parks atomic.Int64   // watchers parked, ever
	// refused counts the takes refused for want of room within
	// TotalBufferBytes (their watchers parked).
	refused atomic.Int64
	// crowded is set when a take was refused, until evictStalled runs;
	// lastEvict is when it last did (unix nanoseconds), and evictions
	// counts the streams it let go of what they held.
	crowded   atomic.Bool
	lastEvict atomic.Int64
	evictions atomic.Int64
	// buffered is what the streams' buffers hold, bounded by
	// TotalBufferBytes: the sum of their charged, the shared fields
	// they refer to, and what takes being encoded reserved.
	buffered atomic.Int64

	// fields are the shared events fields the streams' buffers refer to
	// (shared.go).
	fieldsMu sync.Mutex
	fields   map[fieldKey]*sharedField

	// watchers counts the live watchers of the streams; nil: no bound
	// but MaxWatchers per stream.
	watchers Quota
}

// New returns a registry with no streams.
// Its streams watch b; over a b that is a Store too, they are the
// deployment's, kept in its records (store.go). a rechecks their owners'
// rights, and q counts their watchers; either may be nil (no checks, no
// bound but Config's).
func New(cfg Config, b Backend, a Authority, q Quota) *Registry {
	cfg.setDefaults()
	g := &Registry{cfg: cfg, backend: b, auth: a, watchers: q, streams: make(map[string]*Stream), perKey: make(map[string]int), fields: make(map[fieldKey]*sharedField)}
	g.store, _ = b.(Store)
	return g
}

// Create makes a stream for owner, counted against limitKey, and starts
// its collector, which rechecks permissions when authChanged (taken
// before the request was authorized) is signalled.
func (g *Registry) Create(owner Owner, limitKey string, authChanged <-chan struct{}) (*Stream, error) {
	ms := newMultiStream(g, newStreamID(), owner, limitKey)
	if err := g.register(ms, authChanged); err != nil {
		return nil, err
	}
	return ms, nil
}

// newStreamID draws a stream's id.
func newStreamID() string {
	var raw [streamIDBytes]byte
	_, _ = rand.Read(raw[:]) // never fails: it crashes the process instead
	return base64.RawURLEncoding.EncodeToString(raw[:])
}

// register adds ms to the registry, within the bounds of the server's
// streams and of its owner's, and starts its goroutines.
func (g *Registry) register(ms *Stream, authChanged <-chan struct{}) error {
	g.mu.Lock()
	switch {
	case g.closed:
		g.mu.Unlock()
		return kv.ErrClosed
	case len(g.streams) >= g.cfg.MaxStreams:
		g.mu.Unlock()
		return &LimitError{Limit: LimitStreams, Max: g.cfg.MaxStreams}
	case g.perKey[ms.limitKey] >= g.cfg.MaxStreamsPerUser:
		g.mu.Unlock()
		return &LimitError{Limit: LimitStreamsPerOwner, Max: g.cfg.MaxStreamsPerUser}
	}
	g.streams[ms.id] = ms
	g.perKey[ms.limitKey]++
	g.wg.Add(1)
	if ms.shared != nil {
		g.wg.Add(2)
	}
	g.mu.Unlock()
	go ms.run(authChanged)
	if ms.shared != nil {
		go ms.followRecord()
		go ms.keepRecord()
	}
	ms.mu.Lock()
	ms.armIdle()
	ms.mu.Unlock()
	return nil
}

// Get returns the stream id names, or nil.
func (g *Registry) Get(id string) *Stream {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.streams[id]
}

// forget removes a stream that is gone.
func (g *Registry) forget(ms *Stream) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.streams[ms.id] != ms {
		return
	}
	delete(g.streams, ms.id)
	if g.perKey[ms.limitKey]--; g.perKey[ms.limitKey] <= 0 {
		delete(g.perKey, ms.limitKey)
	}
}

// Len is the number of streams.
func (g *Registry) Len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.streams)
}

// Close drops every stream and waits for their collectors; new streams
// are refused from then on. It is safe to call more than once.
func (g *Registry) Close() {
	g.mu.Lock()
	g.closed = true
	all := make([]*Stream, 0, len(g.streams))
	for _, ms := range g.streams {
		all = append(all, ms)
	}
	g.mu.Unlock()
	for _, ms := range all {
		ms.mu.Lock()
		ms.markGone()
		ms.mu.Unlock()
		g.forget(ms)
	}
	g.wg.Wait()
}

// recheck decides again, after users or roles changed, whether the owner
// of ms may still have it and read each of its watchers; it returns the
// signal of the next change.
func (g *Registry) recheck(ms *Stream) <-chan struct{} {
	next := g.auth.Changed()
	ms.recheck(g.auth.Recheck(ms.owner), func(r keyrange.Range) bool {
		return g.auth.Recheck(ms.owner, r) == nil
	})
	return next
}

// allowed reports whether the owner of ms may read r now.
func (g *Registry) allowed(ms *Stream, r keyrange.Range) bool {
	return g.auth == nil || g.auth.Recheck(ms.owner, r) == nil
}

// acquire counts n more watchers for key against the Quota, if any.
func (g *Registry) acquire(key string, n int) error {
	if g.watchers == nil {
		return nil
	}
	return g.watchers.Acquire(key, n)
}

// release gives back n watchers of key.
func (g *Registry) release(key string, n int) {
	if g.watchers != nil && n != 0 {
		g.watchers.Release(key, n)
	}
}

// recorded checks n more watchers against the deployment's counts c.
func (g *Registry) recorded(c kv.StreamCounts, n int) error {
	if g.watchers == nil {
		return nil
	}
	return g.watchers.Recorded(c, n)
}

// reason is the canceled message's reason for err, an error of the
// Authority's or the stream loop's.
func (g *Registry) reason(err error) string {
	if g.auth == nil {
		return err.Error()
	}
	return g.auth.Reason(err)
}

// IDs returns the ids of the streams.
func (g *Registry) IDs() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	ids := make([]string, 0, len(g.streams))
	for id := range g.streams {
		ids = append(ids, id)
	}
	return ids
}

// Refused counts the takes refused for want of room within
// Config.TotalBufferBytes (their watchers parked).
func (g *Registry) Refused() int64 { return g.refused.Load() }

// Evictions counts the streams let go of what they held for a stalled
// reader, to make room for others.
func (g *Registry) Evictions() int64 { return g.evictions.Load() }

// Config is the registry's configuration, its defaults set.
func (g *Registry) Config() Config { return g.cfg }

// Shared reports whether the streams are the deployment's, kept in its
// records (the backend is a Store), rather than this server's own.
func (g *Registry) Shared() bool { return g.store != nil }

// Parks counts the watchers parked, ever: they had to catch up from
// history.
func (g *Registry) Parks() int64 { return g.parks.Load() }

// Buffered is what the streams' buffers hold, as counted against
// Config.TotalBufferBytes.
func (g *Registry) Buffered() int64 { return g.buffered.Load() }
