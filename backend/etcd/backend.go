package etcd

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/namespace"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/httpkv/httpkv/auth"
	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/watch"
)

// Sub-prefixes of the namespace; see the package doc.
const (
	keysPrefix = "kv/"
	authPrefix = "auth/"
)

// Backend is a gateway to an etcd cluster. All methods are safe for
// concurrent use.
type Backend struct {
	opts Options
	// onError receives what fails in the background.
	onError func(error)
	cli     *clientv3.Client
	// readCli is the client of ranges and txns: its receive limit bounds
	// their answers (MaxResponseBytes). It is cli when there is no bound.
	readCli *clientv3.Client
	// kv and watcher see the namespace's keys only, without their
	// prefix; reads is kv through readCli. Leases are reached through
	// cli, each checked against its record (lease_records.go).
	kv      clientv3.KV
	reads   clientv3.KV
	watcher clientv3.Watcher

	leaseCount leaseCounter

	// rev is the newest revision the gateway has seen (Rev).
	rev atomic.Int64
	// heard is when etcd last answered one of the gateway's requests (its
	// time in Unix nanoseconds): the prober's evidence that etcd serves,
	// slowly, when no member answered its probe in time.
	heard atomic.Int64
	// compact is the newest compact revision the gateway knows of.
	compact atomic.Int64
	// streams numbers the watch streams the gateway opens to etcd, each
	// of its own (see replay.go).
	streams atomic.Int64
	// historyWatches holds a token per etcd watch a request has open to
	// read history (Options.MaxHistoryWatches).
	historyWatches chan struct{}

	figures figures
	avail   *prober
	sched   *watch.Store
	win     *window
	up      *upstream
	// cache, when not nil, answers reads at the current revision once
	// freshness has said how far etcd is (cache.go, freshness.go).
	cache     *readCache
	freshness *freshness
	auth      *auth.Store
	authState authState
	pageKey   []byte

	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	closeOnce sync.Once
	closeErr  error
}

// Open connects to the cluster, reads the namespace's revision, and starts
// the upstream watch from there. It fails if the cluster does not answer
// within Options.StartTimeout. onError, if not nil, receives what fails
// in the background: the upstream watch breaking, an auth refresh
// failing.
func Open(ctx context.Context, onError func(error), opts Options) (*Backend, error) {
	opts.setDefaults()
	if onError == nil {
		onError = func(error) {}
	}
	if len(opts.Endpoints) == 0 {
		return nil, errors.New("etcd: no endpoints")
	}
	cli, err := newClient(opts, opts.Endpoints, 0)
	if err != nil {
		return nil, err
	}
	readCli := cli
	if opts.MaxResponseBytes > 0 {
		// The limit counts the answer's encoding too: room for it.
		if readCli, err = newClient(opts, opts.Endpoints, int(opts.MaxResponseBytes)+responseSlack); err != nil {
			cli.Close()
			return nil, err
		}
	}
	prefix := opts.Namespace + keysPrefix
	b := &Backend{
		opts:    opts,
		onError: onError,
		cli:     cli,
		readCli: readCli,
		kv:      namespace.NewKV(cli.KV, prefix),
		reads:   namespace.NewKV(readCli.KV, prefix),
		watcher: namespace.NewWatcher(cli.Watcher, prefix),

		historyWatches: make(chan struct{}, opts.MaxHistoryWatches),
	}
	b.leaseCount.max = int64(opts.MaxLeases)
	b.ctx, b.cancel = context.WithCancel(context.Background())
	rev, cluster, err := b.firstRead(ctx)
	if err != nil {
		b.cancel()
		b.closeClients()
		return nil, err
	}
	b.pageKey = pageTokenKey(cluster, opts.Namespace)
	conns := []*grpc.ClientConn{cli.ActiveConnection()}
	if readCli != cli {
		conns = append(conns, readCli.ActiveConnection())
	}
	b.avail = newProber(opts, b.probeKey(), conns...)
	b.avail.heard = func() time.Time { return time.Unix(0, b.heard.Load()) }
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		b.avail.run(b.ctx)
	}()
	if err := b.checkDeployment(ctx); err != nil {
		b.cancel()
		b.wg.Wait()
		b.closeClients()
		return nil, err
	}
	b.saw(rev)
	b.win = newWindow(rev, opts.WindowBytes)
	b.sched = watch.New(history{b}, rev, opts.Watch)
	b.up = newUpstream(b, rev+1)
	b.wg.Add(1)
	go b.up.run()
	if opts.ReadCacheBytes > 0 {
		b.cache, b.freshness = newReadCache(opts.ReadCacheBytes, onError), newFreshness()
		b.wg.Add(2)
		go b.cache.run(b)
		go b.freshness.run(b)
	}
	if err := b.openAuth(ctx); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// responseSlack is what a bounded answer's encoding may take beyond its
// keys and values.
const responseSlack = 1 << 20

// newClient connects to endpoints; recvLimit, if not zero, bounds the
// answers it takes.
func newClient(opts Options, endpoints []string, recvLimit int) (*clientv3.Client, error) {
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:            endpoints,
		DialTimeout:          opts.DialTimeout,
		DialKeepAliveTime:    10 * time.Second,
		DialKeepAliveTimeout: opts.RequestTimeout,
		TLS:                  opts.TLS,
		Username:             opts.Username,
		Password:             opts.Password,
		MaxCallRecvMsgSize:   recvLimit,
		DialOptions:          []grpc.DialOption{reconnectParams},
		// The gateway reports what matters through its own errors; the
		// client would log every retry while a member is down.
		Logger: zap.NewNop(),
	})
	if err != nil {
		return nil, fmt.Errorf("etcd: connect to %v: %w", endpoints, err)
	}
	return cli, nil
}

// closeClients closes the clients of the gateway.
func (b *Backend) closeClients() error {
	var err error
	if b.readCli != b.cli {
		err = b.readCli.Close()
	}
	err = errors.Join(err, b.cli.Close())
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// firstRead reads the namespace's revision and the cluster's ID, retrying
// while the cluster does not answer, for StartTimeout at most.
func (b *Backend) firstRead(ctx context.Context) (rev int64, cluster uint64, err error) {
	ctx, cancel := context.WithTimeout(ctx, b.opts.StartTimeout)
	defer cancel()
	for {
		rctx, rcancel := context.WithTimeout(ctx, b.opts.RequestTimeout)
		resp, err := b.kv.Get(rctx, "\x00", clientv3.WithFromKey(), clientv3.WithCountOnly())
		rcancel()
		if err == nil {
			return resp.Header.Revision, resp.Header.ClusterId, nil
		}
		select {
		case <-ctx.Done():
			return 0, 0, fmt.Errorf("etcd: %v did not answer within %v: %w", b.opts.Endpoints, b.opts.StartTimeout, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// pageTokenKey derives the key that seals page tokens from the cluster
// and the namespace, so that every gateway of a deployment accepts the
// others' tokens with nothing to share or store. The key authenticates
// that a token was issued for its list (see wire/token.go);
// it is no secret from whoever knows the cluster's ID, and needs not be:
// a page token only repeats what the request may ask for anyway (its
// start key must lie in the range the request is authorized for).
func pageTokenKey(cluster uint64, ns string) []byte {
	h := sha256.New()
	h.Write([]byte("httpkv page tokens\x00"))
	h.Write(binary.BigEndian.AppendUint64(nil, cluster))
	h.Write([]byte(ns))
	return h.Sum(nil)
}

// Close stops the upstream watch, ends every watcher ("shutting down")
// and closes the client. It is safe to call more than once.
func (b *Backend) Close() error {
	b.closeOnce.Do(func() {
		b.cancel()
		b.wg.Wait()
		if b.sched != nil {
			b.sched.Close()
		}
		b.closeErr = b.closeClients()
	})
	return b.closeErr
}

// Rev is the newest revision the gateway has seen.
func (b *Backend) Rev() int64 { return b.rev.Load() }

// saw records a revision read in an answer of etcd.
func (b *Backend) saw(rev int64) {
	b.heard.Store(time.Now().UnixNano())
	b.reached(rev)
}

// reached records a revision the gateway answered at (etcd's, or its
// read cache's, which may be ahead of any etcd answered).
func (b *Backend) reached(rev int64) {
	for {
		cur := b.rev.Load()
		if rev <= cur || b.rev.CompareAndSwap(cur, rev) {
			return
		}
	}
}

// Failed returns nil: a gateway holds nothing that can fail for good.
// While etcd cannot serve, calls fail with kv.ErrUnavailable instead.
func (b *Backend) Failed() error { return nil }

// PageTokenKey is the key that seals page tokens, the same on every
// gateway of the deployment.
func (b *Backend) PageTokenKey() []byte { return b.pageKey }

// Auth returns the auth store, whose state is kept in etcd.
func (b *Backend) Auth() *auth.Store { return b.auth }

// whileServing returns ctx, ended with the prober's reason when etcd
// stops serving; while etcd does not serve, it fails at once with why.
// stop releases what it holds.
func (b *Backend) whileServing(ctx context.Context) (_ context.Context, stop func(), err error) {
	alive, err := b.avail.serving()
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	unhook := context.AfterFunc(alive, func() { cancel(context.Cause(alive)) })
	return ctx, func() { unhook(); cancel(nil) }, nil
}

// call runs fn with a context bounded by the request timeout and ended
// when etcd stops serving, and returns its error as package kv's (see
// mapErr); while etcd does not serve, it fails at once. When ctx ends
// first, it returns ctx's error: the caller is gone.
func (b *Backend) call(ctx context.Context, fn func(ctx context.Context) error) error {
	sctx, stop, err := b.whileServing(ctx)
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(sctx, b.opts.RequestTimeout)
	err = fn(cctx)
	cancel()
	served := sctx.Err() == nil
	stop()
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		// The caller's reason, when it gave one (a server shutting down
		// ends the waits of its locks so).
		return context.Cause(ctx)
	}
	if !served {
		return context.Cause(sctx) // the prober's: etcd stopped serving
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return kv.Errorf(kv.ErrBackendTimeout, "etcd did not answer within %v", b.opts.RequestTimeout)
	}
	err = mapErr(err)
	if errors.Is(err, kv.ErrCompacted) {
		// etcd says compacted, not where: ask.
		c, cerr := b.compactRevision(ctx)
		if cerr != nil {
			return cerr
		}
		return &kv.CompactedError{CompactRevision: c}
	}
	return err
}
