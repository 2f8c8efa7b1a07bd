package watch

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/httpkv/httpkv/kv"
)

// TestFarBehindWatchersHoldNoOneUp starts watchers 200 revisions of
// 100 KiB behind, whose readers take everything as fast as it comes, so
// that some have room in every sync pass; then a watcher one revision
// behind. A sync pass's read is bounded by the room of its watchers
// (1 MiB), so a read for the far ones covers a tenth of their history.
// The near one must not wait for them to catch up, as it did when each
// pass read only from the oldest revision its watchers needed: it is
// caught up while they have read a fraction of their history.
func TestFarBehindWatchersHoldNoOneUp(t *testing.T) {
	s := newTestStore(t, Options{})
	h := newHistory()
	const n, farWatchers = 200, 8
	last := putLarge(t, s, h, n)

	var farRead atomic.Int64 // revisions the far watchers have read
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for i := range farWatchers {
		far := mustWatch(t, s, kv.WatchRequest{Key: []byte("big/"), End: []byte("big0"), StartRevision: int64(2 + i)})
		wg.Go(func() {
			for {
				rs, err := far.Recv(ctx)
				if err != nil || rs == nil {
					return
				}
				for _, r := range rs {
					farRead.Add(int64(len(r.Events)))
				}
			}
		})
	}

	near := mustWatch(t, s, kv.WatchRequest{Key: []byte("big/"), End: []byte("big0"), StartRevision: last})
	rs := recvUntil(t, near, recvTimeout, func(kv.WatchResponse) bool { return true })
	if len(rs) == 0 || len(rs[0].Events) == 0 || rs[0].Events[0].KV.ModRevision != last {
		t.Fatalf("the watcher from %d got %v, want the put at %d", last, fmtResponses(rs), last)
	}
	got := farRead.Load() / farWatchers
	t.Logf("the watcher one revision behind was caught up when those %d behind had read %d each", n, got)
	if got > n/4 {
		t.Errorf("the watcher one revision behind was caught up only once those %d behind had read %d each: it waited for them", n, got)
	}
}
