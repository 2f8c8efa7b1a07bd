package tests

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/tests/e2e"
	"github.com/httpkv/httpkv/watch"
)

// TestWatchStalledClientBounded opens a watch whose client then stops
// reading, and writes 24 MiB of values under it: what the server holds
// for the stream (queued, and held by the stream while it waits to
// write) stays within the watcher's byte bound and one revision, however
// much is written. A compaction meanwhile ends the stream with
// event: compacted once the client reads again, after what the server
// had held for it.
func TestWatchStalledClientBounded(t *testing.T) {
	t.Parallel()
	f := e2e.StartInProcess(t, t.TempDir())
	w := e2e.OpenWatch(t, f.Server, "key=big/&prefix=true")
	start := w.Created.StartRevision

	const n, size = 48, 512 << 10
	value := bytes.Repeat([]byte{'v'}, size)
	var most int64
	var last int64
	for i := range n {
		res, err := f.Backend.Store().Put(kv.PutRequest{Key: fmt.Appendf(nil, "big/%02d", i), Value: value})
		if err != nil {
			t.Fatalf("Put(big/%02d) = %v", i, err)
		}
		last = res.Revision
		most = max(most, f.Backend.Stats().Watchers.PendingBytes)
	}
	t.Logf("the server held at most %d bytes for a stalled stream over %d puts of %d bytes", most, n, size)
	if limit := int64(watch.DefaultQueueBytes + size + 4096); most > limit {
		t.Fatalf("Stats().PendingBytes reached %d for a stalled stream, want at most %d", most, limit)
	}
	if _, err := f.Backend.Store().Compact(last); err != nil {
		t.Fatalf("Compact(%d) = %v", last, err)
	}
	got := 0
	for {
		m := w.Next(e2e.WatchTimeout)
		if m.Kind == "compacted" {
			if m.CompactRevision != last {
				t.Fatalf("compacted at %d, want %d", m.CompactRevision, last)
			}
			break
		}
		if m.Kind != "message" || m.ID != start+int64(got) {
			t.Fatalf("got %v, want the put at revision %d or compacted", m.Raw, start+int64(got))
		}
		got++
	}
	w.WantEnd(e2e.WatchTimeout)
	if got >= n {
		t.Fatalf("the stalled stream received all %d puts before compacted, want the server to have dropped some", n)
	}
	t.Logf("the stream received %d of %d puts, then compacted", got, n)
	if p := f.Backend.Stats().Watchers; p.PendingBytes != 0 {
		t.Fatalf("stats after the stream ended = %+v, want nothing pending", p)
	}
}
