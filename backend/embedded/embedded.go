package embedded

import (
	"crypto/rand"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/httpkv/httpkv/auth"
	"github.com/httpkv/httpkv/compactor"
	"github.com/httpkv/httpkv/lease"
	"github.com/httpkv/httpkv/mvcc"
	"github.com/httpkv/httpkv/watch"
)

// FileName is the store's bbolt file in the data directory.
const FileName = "httpkv.db"

// pageTokenKeyBytes is the size of the page-token key drawn when none is
// configured.
const pageTokenKeyBytes = 32

// Options tune the embedded backend, each part the package it goes to.
// The zero Options is ready to use.
type Options struct {
	// Store tunes the storage engine.
	Store mvcc.Options
	// Watch tunes the watch scheduler.
	Watch watch.Options
	// Lease tunes the lessor (its expiry rate, its bound; its clock in
	// tests).
	Lease lease.Config
	// Auth tunes the auth store (token TTL, bcrypt cost).
	Auth auth.Config
	// Compaction is the auto-compaction schedule; the zero value is off.
	Compaction compactor.Config
	// PageTokenKey seals page tokens; empty draws a random one, so tokens
	// do not outlive the process. Tests set it.
	PageTokenKey []byte
}

// Backend is the embedded store. All methods are safe for concurrent use.
type Backend struct {
	kv       *mvcc.Store
	lessor   *lease.Lessor
	leases   *lease.Manager
	watch    *watch.Store
	auth     *auth.Store
	comp     *compactor.Compactor
	tokenKey []byte

	closeOnce sync.Once
	closeErr  error
}

// Open opens (creating it if needed) the store in the data directory dir
// and starts what serves it. onError, if not nil, receives what fails in
// the background: the revoke of an expired lease, an auto-compaction.
// commit, if not nil, commits the store's batches: the fault tests' seam
// (mvcc.Committer).
func Open(dir string, onError func(error), commit mvcc.Committer, opts Options) (*Backend, error) {
	b := &Backend{tokenKey: opts.PageTokenKey}
	if len(b.tokenKey) == 0 {
		b.tokenKey = make([]byte, pageTokenKeyBytes)
		_, _ = rand.Read(b.tokenKey) // never fails: it crashes the process instead
	}
	if onError == nil {
		onError = func(error) {}
	}
	b.lessor = lease.New(opts.Lease)
	kvs, err := mvcc.Open(filepath.Join(dir, FileName), b.lessor, commit, opts.Store)
	if err != nil {
		b.lessor.Close()
		return nil, err
	}
	b.kv = kvs
	// From here on, Close undoes what was opened.
	if err := b.start(opts, onError); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// start restores the state kept beside the history and starts the
// scheduler, the lease manager and the compactor.
func (b *Backend) start(opts Options, onError func(error)) error {
	if err := restore(b.kv, b.lessor.Restore); err != nil {
		return err
	}
	b.auth = auth.New(authWriter{b.kv}, nil, opts.Auth)
	if err := restore(b.kv, b.auth.Restore); err != nil {
		return err
	}
	ws, err := mvcc.Observe(b.kv, func(rev int64) *watch.Store { return watch.New(b.kv, rev, opts.Watch) })
	if err != nil {
		return fmt.Errorf("embedded: start the watch scheduler: %w", err)
	}
	b.watch = ws
	b.leases = lease.NewManager(b.lessor, leaseWriter{b.kv}, onError)
	b.comp = compactor.New(opts.Compaction, b.kv, func(err error) {
		onError(fmt.Errorf("auto-compaction: %w", err))
	})
	return nil
}

// restore loads state kept beside the key history (leases, auth) through
// load, which reads its buckets with the given function.
func restore[F ~func([]byte, func(k, v []byte) error) error](s *mvcc.Store, load func(F) error) error {
	rt, err := s.Read()
	if err != nil {
		return err
	}
	defer rt.End()
	return load(rt.UnsafeForEach)
}

// Close stops everything Open started, in reverse order, and closes the
// store. It is safe to call more than once.
func (b *Backend) Close() error {
	b.closeOnce.Do(func() {
		if b.comp != nil {
			b.comp.Close()
		}
		if b.leases != nil {
			b.leases.Close()
		}
		b.lessor.Close()
		if b.watch != nil {
			b.watch.Close()
		}
		b.closeErr = b.kv.Close()
	})
	return b.closeErr
}

// Auth returns the auth store, whose users and roles are written in the
// store's write transaction.
func (b *Backend) Auth() *auth.Store { return b.auth }

// Store returns the storage engine, for tools and tests: its every write
// reaches the watchers too.
func (b *Backend) Store() *mvcc.Store { return b.kv }

// authWriter is the store's write path as the auth store takes it.
type authWriter struct{ s *mvcc.Store }

func (w authWriter) Write(fn func(auth.Bucket) error) error {
	_, err := w.s.Write(func(tx *mvcc.WriteTxn) error { return fn(tx) })
	return err
}

// leaseWriter is the store's write path as the lease manager takes it.
type leaseWriter struct{ s *mvcc.Store }

func (w leaseWriter) Write(fn func(lease.WriteTxn) error) (int64, error) {
	ch, err := w.s.Write(func(tx *mvcc.WriteTxn) error { return fn(tx) })
	return ch.Revision, err
}
