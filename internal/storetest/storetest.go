// Package storetest opens the embedded store for the tests of the
// packages above it, and measures what they hold. It is for tests only.
package storetest

import (
	"runtime"
	"testing"

	"github.com/httpkv/httpkv/backend/embedded"
)

// Open opens the embedded backend in a temporary directory, without
// fsync, closed on cleanup.
func Open(tb testing.TB, opts embedded.Options) *embedded.Backend {
	tb.Helper()
	opts.Store.NoFsync = true
	b, err := embedded.Open(tb.TempDir(), nil, nil, opts)
	if err != nil {
		tb.Fatalf("embedded.Open: %v", err)
	}
	tb.Cleanup(func() {
		if err := b.Close(); err != nil {
			tb.Errorf("embedded.Backend.Close: %v", err)
		}
	})
	return b
}

// HeapInUse is the live heap after a full collection.
func HeapInUse() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
