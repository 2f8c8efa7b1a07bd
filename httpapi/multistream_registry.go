package httpapi

import (
	"crypto/rand"
	"encoding/base64"
	"sync"
	"sync/atomic"
	"time"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
)

// Defaults of WatchStreamConfig.
const (
	DefaultWatchStreamIdleTimeout  = 60 * time.Second
	DefaultMaxWatchStreams         = 10000
	DefaultMaxWatchStreamsPerUser  = 32
	DefaultMaxWatchersPerStream    = 10000
	DefaultWatchStreamBufferBytes  = 4 << 20
	DefaultWatchStreamsBufferBytes = 256 << 20
	DefaultWatchStreamResumeBytes  = 4 << 20
	streamIDBytes                  = 16
)

// WatchStreamConfig bounds the streams of many watchers
// (/v1/watch/streams): every cost a client can make the server bear is
// bounded by one of these.
type WatchStreamConfig struct {
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

func (c *WatchStreamConfig) setDefaults() {
	orDefault(&c.IdleTimeout, DefaultWatchStreamIdleTimeout)
	orDefault(&c.MaxStreams, DefaultMaxWatchStreams)
	orDefault(&c.MaxStreamsPerUser, DefaultMaxWatchStreamsPerUser)
	orDefault(&c.MaxWatchers, DefaultMaxWatchersPerStream)
	orDefault(&c.BufferBytes, DefaultWatchStreamBufferBytes)
	orDefault(&c.TotalBufferBytes, DefaultWatchStreamsBufferBytes)
	orDefault(&c.ResumeBytes, DefaultWatchStreamResumeBytes)
}

// orDefault sets *v to def unless it is positive.
func orDefault[T int | int64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// Errors of the stream endpoints.
var (
	errStreamNotFound = errorf(codeStreamNotFound,
		"no such watch stream: it was deleted, or dropped after a while without a connection, or is another user's")
	errWatchNotFound = errorf(codeWatchNotFound, "no such watch on this stream, or it has ended")
)

func tooManyWatchers(n int) *apiError {
	return errorf(kv.CodeTooManyRequests, "a stream has at most %d watchers (--max-watchers-per-stream)", n)
}

// streamRegistry holds the streams of many watchers of a Handler and
// owns their collector goroutines.
type streamRegistry struct {
	cfg     WatchStreamConfig
	backend Watcher
	auth    streamAuthorizer // nil when the Authorizer has no stream checks
	owners  ownerAuthorizer  // nil when it knows no owners

	// store keeps the streams' records where every gateway of the
	// deployment reads them; nil when streams are this server's own.
	store StreamStore
	// openMu serialises the making of instances of shared streams: two
	// connections of one stream arriving at once make one.
	openMu sync.Mutex

	mu      sync.Mutex // guards the fields below; never held while taking a stream's
	streams map[string]*multiStream
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
	// (multistream_shared.go).
	fieldsMu sync.Mutex
	fields   map[fieldKey]*sharedField

	// watchers counts the live watchers of the streams against the bound
	// for all watchers of the server (--max-watchers), which single
	// watches count against too; set by NewHandler.
	watchers *quota
}

func newStreamRegistry(cfg WatchStreamConfig, b Watcher, a Authorizer) *streamRegistry {
	cfg.setDefaults()
	g := &streamRegistry{cfg: cfg, backend: b, streams: make(map[string]*multiStream), perKey: make(map[string]int), fields: make(map[fieldKey]*sharedField),
		watchers: newQuota(DefaultMaxWatchers, DefaultMaxWatchers, "watchers", "--max-watchers", "--max-watchers-per-user")}
	g.auth, _ = a.(streamAuthorizer)
	g.owners, _ = a.(ownerAuthorizer)
	g.store, _ = b.(StreamStore)
	return g
}

// create makes a stream for owner, counted against limitKey, and starts
// its collector, which rechecks permissions when authChanged (taken
// before the request was authorized) is signalled.
func (g *streamRegistry) create(owner streamOwner, limitKey string, authChanged <-chan struct{}) (*multiStream, error) {
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
func (g *streamRegistry) register(ms *multiStream, authChanged <-chan struct{}) error {
	g.mu.Lock()
	switch {
	case g.closed:
		g.mu.Unlock()
		return kv.ErrClosed
	case len(g.streams) >= g.cfg.MaxStreams:
		g.mu.Unlock()
		return errorf(kv.CodeTooManyRequests, "the server has %d watch streams, its most (--max-watch-streams); retry later", g.cfg.MaxStreams)
	case g.perKey[ms.limitKey] >= g.cfg.MaxStreamsPerUser:
		g.mu.Unlock()
		return tooManyStreamsPerUser(g.cfg.MaxStreamsPerUser)
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

func tooManyStreamsPerUser(n int) *apiError {
	return errorf(kv.CodeTooManyRequests, "at most %d watch streams per user, or per client address with auth off (--max-watch-streams-per-user): delete one, or add watches to one", n)
}

// get returns the stream id names, or nil.
func (g *streamRegistry) get(id string) *multiStream {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.streams[id]
}

// forget removes a stream that is gone.
func (g *streamRegistry) forget(ms *multiStream) {
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

// len is the number of streams.
func (g *streamRegistry) len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.streams)
}

// close drops every stream and waits for their collectors; new streams
// are refused from then on. It is safe to call more than once.
func (g *streamRegistry) close() {
	g.mu.Lock()
	g.closed = true
	all := make([]*multiStream, 0, len(g.streams))
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
func (g *streamRegistry) recheck(ms *multiStream) <-chan struct{} {
	next := g.auth.Changed()
	if g.owners == nil {
		return next
	}
	ms.recheck(g.owners.RecheckOwner(ms.owner, Access{}), func(r keyrange.Range) bool {
		return g.owners.RecheckOwner(ms.owner, Access{Read: []keyrange.Range{r}}) == nil
	})
	return next
}

// allowed reports whether the owner of ms may read r now.
func (g *streamRegistry) allowed(ms *multiStream, r keyrange.Range) bool {
	return g.owners == nil || g.owners.RecheckOwner(ms.owner, Access{Read: []keyrange.Range{r}}) == nil
}
