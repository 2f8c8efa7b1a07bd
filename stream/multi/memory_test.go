package multi

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/httpkv/httpkv/backend/embedded"
	"github.com/httpkv/httpkv/internal/storetest"
	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
)

// watcherMemory returns the heap bytes an idle watcher of a stream holds,
// over n watchers of a key or a prefix (half each), server side: the stream's record of it
// and the scheduler's watch.
func watcherMemory(tb testing.TB, n int) float64 {
	tb.Helper()
	b := storetest.Open(tb, embedded.Options{})
	reg := New(Config{MaxWatchers: n}, b, nil, nil)
	defer reg.Close()
	ms, err := reg.Create(Owner{}, "test", nil)
	if err != nil {
		tb.Fatal(err)
	}
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "memory/%08d", i)
	}
	before := storetest.HeapInUse()
	for i, k := range keys {
		r := keyrange.Single(k)
		if i%2 == 1 {
			r = keyrange.Prefix(k)
		}
		if _, err := ms.AddWatch(kv.WatchRequest{Key: r.Key, End: r.End}); err != nil {
			tb.Fatal(err)
		}
	}
	// What was encoded for the reader (created messages) is not the
	// watchers' to hold: drop it, as a reader taking it would.
	ms.mu.Lock()
	if ms.pending != nil {
		ms.pending = nil
	}
	ms.log.written = ms.log.issued
	ms.log.reset()
	ms.mu.Unlock()
	after := storetest.HeapInUse()
	runtime.KeepAlive(keys)
	return float64(after-before) / float64(n)
}

// TestWatchStreamWatcherMemory: an idle watcher of a stream holds less
// than 1.5 KiB, on both sides of the seam.
func TestWatchStreamWatcherMemory(t *testing.T) {
	per := watcherMemory(t, 10000)
	t.Logf("%.0f bytes per idle watcher", per)
	if per > 1536 {
		t.Fatalf("an idle watcher of a stream holds %.0f bytes, want under 1.5 KiB", per)
	}
}
