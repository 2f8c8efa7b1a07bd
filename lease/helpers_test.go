package lease_test

import (
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/lease"
	"github.com/httpkv/httpkv/mvcc"
)

// The types the store and the lessor exchange fit each other.
var (
	_ mvcc.Lessor       = (*lease.Lessor)(nil)
	_ lease.WriteTxn    = (*mvcc.WriteTxn)(nil)
	_ lease.ForEachFunc = (*mvcc.ReadTxn)(nil).UnsafeForEach
)

// storeWriter is the store's write path as a lease.Writer.
type storeWriter struct{ w *mvcc.Store }

func (sw storeWriter) Write(fn func(lease.WriteTxn) error) (int64, error) {
	ch, err := sw.w.Write(func(tx *mvcc.WriteTxn) error { return fn(tx) })
	return ch.Revision, err
}

// env is a store, a lessor and a lease manager wired as the server wires
// them. The manager grants and revokes; its expiry loop runs only once
// startRevoker is called, so that a test can take the lessor's reports
// itself.
type env struct {
	path    string
	store   *mvcc.Store
	lessor  *lease.Lessor
	manager *lease.Manager

	revoker   *lease.Manager // the manager whose loop runs; nil before startRevoker
	revoked   atomic.Int64   // reported leases the revoker revoked
	closeOnce sync.Once
}

// openEnv opens (or reopens) the store at path with a new lessor, restores
// the leases, and closes everything when the test ends.
func openEnv(tb testing.TB, path string, cfg lease.Config) *env {
	tb.Helper()
	return openEnvWith(tb, path, cfg, nil)
}

// openEnvWith is openEnv with the store's commits going through c.
func openEnvWith(tb testing.TB, path string, cfg lease.Config, c mvcc.Committer) *env {
	tb.Helper()
	l := lease.New(cfg)
	s, err := mvcc.Open(path, l, c, mvcc.Options{NoFsync: true})
	if err != nil {
		l.Close()
		tb.Fatalf("mvcc.Open(%q) = %v", path, err)
	}
	e := &env{path: path, store: s, lessor: l, manager: lease.NewIdleManager(l, storeWriter{s})}
	tb.Cleanup(e.close)
	r, err := s.Read()
	if err != nil {
		tb.Fatalf("Read() = %v", err)
	}
	err = l.Restore(r.UnsafeForEach)
	r.End()
	if err != nil {
		tb.Fatalf("Restore() = %v", err)
	}
	return e
}

// newEnv opens a fresh store in a temporary directory.
func newEnv(tb testing.TB, cfg lease.Config) *env {
	tb.Helper()
	return openEnv(tb, filepath.Join(tb.TempDir(), "db"), cfg)
}

// close stops the revoker, the lessor, then closes the store.
func (e *env) close() {
	e.closeOnce.Do(func() {
		if e.revoker != nil {
			e.revoker.Close()
		}
		e.lessor.Close()
		e.store.Close()
	})
}

func mustGrant(tb testing.TB, e *env, id, ttl int64) lease.Lease {
	tb.Helper()
	g, err := e.manager.Grant(id, ttl)
	if err != nil {
		tb.Fatalf("Grant(%d, %d) = %v", id, ttl, err)
	}
	return g
}

// startRevoker starts a manager whose loop revokes every lease the lessor
// reports expired, until the test ends. onBatch, if not nil, sees each
// batch first.
func (e *env) startRevoker(tb testing.TB, onBatch func(ids []int64)) {
	tb.Helper()
	e.revoker = lease.NewObservedManager(e.lessor, storeWriter{e.store}, func(err error) {
		if !errors.Is(err, kv.ErrClosed) { // the test is over
			tb.Errorf("revoking an expired lease: %v", err)
		}
	}, onBatch, func(_ int64, err error) {
		if err == nil {
			e.revoked.Add(1)
		}
	})
}

func mustPut(tb testing.TB, e *env, r kv.PutRequest) int64 {
	tb.Helper()
	res, err := e.store.Put(r)
	if err != nil {
		tb.Fatalf("Put(%q, lease=%d) = %v", r.Key, r.Lease, err)
	}
	return res.Revision
}

// liveKeys returns every key in the store.
func liveKeys(tb testing.TB, s *mvcc.Store) []string {
	tb.Helper()
	res, err := s.Range([]byte{0}, []byte{0}, kv.RangeOptions{})
	if err != nil {
		tb.Fatalf("Range(all) = %v", err)
	}
	var keys []string
	for _, kval := range res.KVs {
		keys = append(keys, string(kval.Key))
	}
	return keys
}

// keysOf returns the keys attached to the lease, as strings.
func keysOf(tb testing.TB, l *lease.Lessor, id int64) []string {
	tb.Helper()
	keys, err := l.Keys(id)
	if err != nil {
		tb.Fatalf("Keys(%d) = %v", id, err)
	}
	return strs(keys)
}

func strs(keys [][]byte) []string {
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, string(k))
	}
	return out
}

// history returns the events with a revision in [from, current].
func history(tb testing.TB, s *mvcc.Store, from int64) []kv.Event {
	tb.Helper()
	r, err := s.Read()
	if err != nil {
		tb.Fatalf("Read() = %v", err)
	}
	defer r.End()
	var evs []kv.Event
	err = r.History(from, func(ev kv.Event) bool {
		evs = append(evs, ev)
		return true
	})
	if err != nil {
		tb.Fatalf("History(%d) = %v", from, err)
	}
	return evs
}

// clock is a fake Config.Now that a test moves by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// leasedPut is a put of key with the lease.
func leasedPut(key string, id int64) kv.PutRequest {
	return kv.PutRequest{Key: []byte(key), Value: []byte("v"), Lease: id}
}
