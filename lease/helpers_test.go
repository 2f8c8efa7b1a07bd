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
	_ lease.Txn         = (*mvcc.WriteTxn)(nil)
	_ lease.ForEachFunc = (*mvcc.ReadTxn)(nil).UnsafeForEach
)

// env is a store and a lessor wired as the server wires them.
type env struct {
	path   string
	store  *mvcc.Store
	lessor *lease.Lessor

	revokerDone chan struct{} // closed when the revoker returns; nil without one
	revoked     atomic.Int64  // reported leases the revoker handled
	closeOnce   sync.Once
}

// openEnv opens (or reopens) the store at path with a new lessor, restores
// the leases, and closes both when the test ends.
func openEnv(tb testing.TB, path string, cfg lease.Config) *env {
	tb.Helper()
	return openEnvWith(tb, path, cfg, nil)
}

// openEnvWith is openEnv with the store's commits going through c.
func openEnvWith(tb testing.TB, path string, cfg lease.Config, c mvcc.Committer) *env {
	tb.Helper()
	l := lease.New(cfg)
	s, err := mvcc.Open(path, mvcc.Options{NoFsync: true, Lessor: l, Committer: c})
	if err != nil {
		l.Close()
		tb.Fatalf("mvcc.Open(%q) = %v", path, err)
	}
	e := &env{path: path, store: s, lessor: l}
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

// close stops the lessor (which ends the revoker), then closes the store.
func (e *env) close() {
	e.closeOnce.Do(func() {
		e.lessor.Close()
		if e.revokerDone != nil {
			<-e.revokerDone
		}
		e.store.Close()
	})
}

// grant grants a lease in a store write, as the HTTP layer will.
func grant(w mvcc.Writer, l *lease.Lessor, id, ttl int64) (lease.Lease, error) {
	return mvcc.Apply(w, func(tx *mvcc.WriteTxn) (lease.Lease, error) {
		return l.Grant(tx, id, ttl)
	})
}

func mustGrant(tb testing.TB, e *env, id, ttl int64) lease.Lease {
	tb.Helper()
	g, err := grant(e.store, e.lessor, id, ttl)
	if err != nil {
		tb.Fatalf("Grant(%d, %d) = %v", id, ttl, err)
	}
	return g
}

// revoke deletes every key attached to the lease and forgets the lease in
// one store write: one revision, so watchers see the deletes together.
// This is the sequence the server runs, through the watch store, for a
// revoke request and for every lease the lessor reports expired.
func revoke(w mvcc.Writer, l *lease.Lessor, id int64) (kv.Changes, error) {
	return w.Write(func(tx *mvcc.WriteTxn) error {
		st, err := l.Status(tx, id)
		if err != nil {
			return err
		}
		return deleteAndRevoke(tx, l, id, st.Keys)
	})
}

// revokeExpired is revoke for a lease the lessor reported expired: it
// does nothing if the lease is no longer expired, as when a client
// revoked it and granted the ID again after the report.
func revokeExpired(w mvcc.Writer, l *lease.Lessor, id int64) (kv.Changes, error) {
	return w.Write(func(tx *mvcc.WriteTxn) error {
		st, err := l.Status(tx, id)
		if err != nil || st.Remaining > 0 {
			return err
		}
		return deleteAndRevoke(tx, l, id, st.Keys)
	})
}

// deleteAndRevoke deletes the lease's keys, then forgets the lease: last,
// so that if a delete fails the store undoes the others and the lease
// stays.
func deleteAndRevoke(tx *mvcc.WriteTxn, l *lease.Lessor, id int64, keys [][]byte) error {
	for _, k := range keys {
		if _, err := tx.DeleteRange(kv.DeleteRequest{Key: k}); err != nil {
			return err
		}
	}
	return l.Revoke(tx, id)
}

// startRevoker revokes every lease the lessor reports expired, each batch
// concurrently so the store commits them together, until the lessor is
// closed. onBatch, if not nil, sees each batch first.
func (e *env) startRevoker(tb testing.TB, onBatch func(ids []int64)) {
	tb.Helper()
	e.revokerDone = make(chan struct{})
	go func() {
		defer close(e.revokerDone)
		for ids := range e.lessor.Expired() {
			if onBatch != nil {
				onBatch(ids)
			}
			var wg sync.WaitGroup
			for _, id := range ids {
				wg.Go(func() {
					_, err := revokeExpired(e.store, e.lessor, id)
					switch {
					case err == nil:
						e.revoked.Add(1)
					case errors.Is(err, lease.ErrNotFound), errors.Is(err, kv.ErrClosed):
						// Revoked already, after an earlier report; or
						// the test is over.
					default:
						tb.Errorf("revokeExpired(%d) = %v", id, err)
					}
				})
			}
			wg.Wait()
		}
	}()
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
