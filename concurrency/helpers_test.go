package concurrency_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/httpkv/httpkv/concurrency"
	"github.com/httpkv/httpkv/concurrency/embedded"
	"github.com/httpkv/httpkv/lease"
	"github.com/httpkv/httpkv/mvcc"
	"github.com/httpkv/httpkv/watch"
)

// checkInterval is how often the test lessor looks for expired leases:
// one expiry tick.
const checkInterval = 500 * time.Millisecond

// env is the embedded store as the server wires it: mvcc with a lessor,
// the watchable store over it, a loop that revokes expired leases, and
// the concurrency backend over all that.
type env struct {
	kv      *mvcc.Store
	store   *watch.Store
	lessor  *lease.Lessor
	b       *embedded.Backend
	revoker sync.WaitGroup
}

// newEnv starts an env that stops when the test ends. Under
// testing/synctest its timers are the bubble's.
func newEnv(tb testing.TB) *env {
	tb.Helper()
	e := &env{lessor: lease.New(lease.Config{CheckInterval: checkInterval})}
	kv, err := mvcc.Open(filepath.Join(tb.TempDir(), "db"), mvcc.Options{NoFsync: true, Lessor: e.lessor})
	if err != nil {
		e.lessor.Close()
		tb.Fatalf("mvcc.Open: %v", err)
	}
	e.kv = kv
	e.store = watch.New(kv, watch.Options{})
	e.b = embedded.New(e.store, func(id int64) bool {
		_, err := e.lessor.TimeToLive(id, false)
		return err == nil
	})
	e.revoker.Add(1)
	go e.revokeExpired()
	tb.Cleanup(func() {
		e.lessor.Close() // closes Expired, which ends the revoker
		e.revoker.Wait()
		e.store.Close()
		if err := kv.Close(); err != nil {
			tb.Errorf("mvcc.Store.Close: %v", err)
		}
	})
	return e
}

func (e *env) revokeExpired() {
	defer e.revoker.Done()
	for ids := range e.lessor.Expired() {
		for _, id := range ids {
			_ = e.revoke(id)
		}
	}
}

// grant grants a lease of ttl seconds.
func (e *env) grant(tb testing.TB, ttl int64) int64 {
	tb.Helper()
	l, err := mvcc.Apply(e.store, func(tx *mvcc.WriteTxn) (lease.Lease, error) {
		return e.lessor.Grant(tx, 0, ttl)
	})
	if err != nil {
		tb.Fatalf("Grant(ttl %d): %v", ttl, err)
	}
	return l.ID
}

// revoke deletes a lease's keys and the lease in one revision.
func (e *env) revoke(id int64) error {
	_, err := e.store.Write(func(tx *mvcc.WriteTxn) error {
		st, err := e.lessor.TimeToLive(id, true)
		if err != nil {
			return err
		}
		for _, k := range st.Keys {
			if _, err := tx.DeleteRange(mvcc.DeleteRequest{Key: k}); err != nil {
				return err
			}
		}
		return e.lessor.Revoke(tx, id)
	})
	if errors.Is(err, lease.ErrNotFound) {
		return nil
	}
	return err
}

// keys returns the keys under name's prefix, oldest first.
func (e *env) keys(tb testing.TB, name string) []concurrency.KeyValue {
	tb.Helper()
	res, err := e.b.Range(context.Background(), concurrency.RangeRequest{
		Key: concurrency.Prefix([]byte(name)), End: concurrency.PrefixEnd([]byte(name)),
	})
	if err != nil {
		tb.Fatalf("Range(%s/): %v", name, err)
	}
	return res.KVs
}

// put writes a key outside any lock and returns its revision.
func (e *env) put(tb testing.TB, key string) int64 {
	tb.Helper()
	res, err := e.store.Put(mvcc.PutRequest{Key: []byte(key), Value: []byte("x")})
	if err != nil {
		tb.Fatalf("Put(%q): %v", key, err)
	}
	return res.Revision
}
