package concurrency_test

import (
	"context"
	"testing"
	"time"

	"github.com/httpkv/httpkv/backend/embedded"
	"github.com/httpkv/httpkv/concurrency"
	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/lease"
)

// checkInterval is one expiry tick of the test store's lessor.
const checkInterval = 500 * time.Millisecond

// env is the embedded backend with the helpers the tests share. Under
// testing/synctest its timers are the bubble's.
type env struct {
	kv *embedded.Backend
	b  *backend
}

// backend is the embedded backend as locks and elections take it, as
// the API adapts it: every txn carries guard (nil: none).
type backend struct {
	*embedded.Backend
	guard kv.LeaseGuard
}

func (b *backend) Txn(ctx context.Context, r kv.TxnRequest) (kv.TxnResult, error) {
	return b.Backend.Txn(ctx, r, b.guard)
}

var _ concurrency.Backend = (*backend)(nil)

func newEnv(tb testing.TB) *env {
	tb.Helper()
	b, err := embedded.Open(tb.TempDir(), nil, nil, embedded.Options{Lease: lease.Config{CheckInterval: checkInterval}})
	if err != nil {
		tb.Fatalf("embedded.Open: %v", err)
	}
	tb.Cleanup(func() {
		if err := b.Close(); err != nil {
			tb.Errorf("embedded.Backend.Close: %v", err)
		}
	})
	return &env{kv: b, b: &backend{Backend: b}}
}

// grant grants a lease of ttl seconds and returns its ID.
func (e *env) grant(tb testing.TB, ttl int64) int64 {
	tb.Helper()
	l, err := e.kv.Grant(context.Background(), 0, ttl)
	if err != nil {
		tb.Fatalf("Grant(ttl %d): %v", ttl, err)
	}
	return l.ID
}

// revoke deletes a lease's keys and the lease in one revision.
func (e *env) revoke(id int64) error {
	_, err := e.kv.Revoke(context.Background(), id, nil)
	return err
}

// keys returns the keys under name's prefix, oldest first.
func (e *env) keys(tb testing.TB, name string) []kv.KeyValue {
	tb.Helper()
	res, err := e.b.Range(context.Background(), kv.RangeRequest{
		Key: concurrency.Prefix([]byte(name)), End: concurrency.PrefixEnd([]byte(name)),
		Options: kv.RangeOptions{SortTarget: kv.SortByCreate, SortOrder: kv.SortAscend},
	})
	if err != nil {
		tb.Fatalf("Range(%s/): %v", name, err)
	}
	return res.KVs
}

// put writes a key outside any lock and returns its revision.
func (e *env) put(tb testing.TB, key string) int64 {
	tb.Helper()
	return e.putLease(tb, key, 0)
}

// putLease writes a key attached to a lease and returns its revision.
func (e *env) putLease(tb testing.TB, key string, lease int64) int64 {
	tb.Helper()
	res, err := e.kv.Put(context.Background(), kv.PutRequest{Key: []byte(key), Value: []byte("x"), Lease: lease}, nil)
	if err != nil {
		tb.Fatalf("Put(%q, lease %x): %v", key, lease, err)
	}
	return res.Revision
}

// result is what a call on another goroutine returned.
type result[T any] struct {
	v   T
	err error
}

// async runs f on a goroutine of its own; the channel yields its result.
// (The test's goroutine checks it: t.Fatal is for that one alone.)
func async[T any](f func() (T, error)) <-chan result[T] {
	ch := make(chan result[T], 1)
	go func() {
		v, err := f()
		ch <- result[T]{v, err}
	}()
	return ch
}

// lockAsync locks name for lease, waiting up to a minute, on a goroutine
// of its own.
func (e *env) lockAsync(ctx context.Context, name string, lease int64) <-chan result[concurrency.Held] {
	return async(func() (concurrency.Held, error) {
		return concurrency.Lock(ctx, e.b, []byte(name), lease, time.Minute)
	})
}
