package concurrency_test

import (
	"context"
	"testing"
	"time"

	"github.com/httpkv/httpkv/concurrency"
	"github.com/httpkv/httpkv/concurrency/embedded/embeddedtest"
	"github.com/httpkv/httpkv/mvcc"
)

// checkInterval is one expiry tick of the test lessor.
const checkInterval = embeddedtest.CheckInterval

// env is the embedded store with the helpers the tests share.
type env struct {
	*embeddedtest.Env
	b concurrency.Backend
}

func newEnv(tb testing.TB) *env {
	tb.Helper()
	e := embeddedtest.Start(tb)
	return &env{Env: e, b: e.Backend}
}

func (e *env) grant(tb testing.TB, ttl int64) int64 { tb.Helper(); return e.Grant(tb, ttl) }
func (e *env) revoke(id int64) error                { return e.Revoke(id) }

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
	res, err := e.Store.Put(mvcc.PutRequest{Key: []byte(key), Value: []byte("x")})
	if err != nil {
		tb.Fatalf("Put(%q): %v", key, err)
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
