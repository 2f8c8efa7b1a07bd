package embeddedtest

import (
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/httpkv/httpkv/concurrency/embedded"
	"github.com/httpkv/httpkv/lease"
	"github.com/httpkv/httpkv/mvcc"
	"github.com/httpkv/httpkv/watch"
)

// CheckInterval is how often the lessor looks for expired leases: one
// expiry tick.
const CheckInterval = 500 * time.Millisecond

// Env is a running embedded store.
type Env struct {
	KV      *mvcc.Store
	Store   *watch.Store
	Lessor  *lease.Lessor
	Backend *embedded.Backend
	revoker sync.WaitGroup
}

// Start opens a store in a temporary directory; it stops when the test
// ends. Under testing/synctest its timers are the bubble's.
func Start(tb testing.TB) *Env {
	tb.Helper()
	e := &Env{Lessor: lease.New(lease.Config{CheckInterval: CheckInterval})}
	kv, err := mvcc.Open(filepath.Join(tb.TempDir(), "db"), mvcc.Options{NoFsync: true, Lessor: e.Lessor})
	if err != nil {
		e.Lessor.Close()
		tb.Fatalf("mvcc.Open: %v", err)
	}
	e.KV = kv
	e.Store = watch.New(kv, watch.Options{})
	e.Backend = embedded.New(e.Store, func(id int64) bool {
		_, err := e.Lessor.TimeToLive(id, false)
		return err == nil
	})
	e.revoker.Add(1)
	go e.revokeExpired()
	tb.Cleanup(func() {
		e.Lessor.Close() // closes Expired, which ends the revoker
		e.revoker.Wait()
		e.Store.Close()
		if err := kv.Close(); err != nil {
			tb.Errorf("mvcc.Store.Close: %v", err)
		}
	})
	return e
}

func (e *Env) revokeExpired() {
	defer e.revoker.Done()
	for ids := range e.Lessor.Expired() {
		for _, id := range ids {
			_ = e.Revoke(id)
		}
	}
}

// Grant grants a lease of ttl seconds and returns its ID.
func (e *Env) Grant(tb testing.TB, ttl int64) int64 {
	tb.Helper()
	l, err := mvcc.Apply(e.Store, func(tx *mvcc.WriteTxn) (lease.Lease, error) {
		return e.Lessor.Grant(tx, 0, ttl)
	})
	if err != nil {
		tb.Fatalf("Grant(ttl %d): %v", ttl, err)
	}
	return l.ID
}

// Revoke deletes a lease's keys and the lease in one revision; a lease
// that is gone already is not an error.
func (e *Env) Revoke(id int64) error {
	_, err := e.Store.Write(func(tx *mvcc.WriteTxn) error {
		st, err := e.Lessor.TimeToLive(id, true)
		if err != nil {
			return err
		}
		for _, k := range st.Keys {
			if _, err := tx.DeleteRange(mvcc.DeleteRequest{Key: k}); err != nil {
				return err
			}
		}
		return e.Lessor.Revoke(tx, id)
	})
	if errors.Is(err, lease.ErrNotFound) {
		return nil
	}
	return err
}
