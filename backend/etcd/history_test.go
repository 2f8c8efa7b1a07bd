package etcd

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"

	"github.com/httpkv/httpkv/internal/etcdtest"
	"github.com/httpkv/httpkv/kv"
)

// readAll reads every page of q and returns the events, and how many
// pages it took.
func readAll(tb testing.TB, b *Backend, q kv.HistoryRequest) ([]string, int) {
	tb.Helper()
	var out []string
	for pages := 1; ; pages++ {
		page, err := b.History(context.Background(), q)
		if err != nil {
			tb.Fatalf("History(%+v) = %v", q, err)
		}
		for _, ev := range page.Events {
			out = append(out, eventString(ev))
		}
		if !page.More {
			return out, pages
		}
		q.StartRevision, q.EndRevision, q.Resume = page.StartRevision, page.EndRevision, page.Next
	}
}

// TestHistoryPages: a key's history read by pages, ascending and
// descending (over spans of revisions of other keys), is the same in
// reverse, whatever the page size or the revisions a page may scan; a
// page that scans its bound without finding an event ends with More
// and no event; a window starting below the compact revision answers
// compacted, and a descending read the compaction overtook ends with a
// page that says so.
func TestHistoryPages(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	b := openGateway(t, c, "/h/", func(o *Options) { o.ClusterMaintenance = true })
	ctx := context.Background()
	var want []string
	var first int64 // the revision of a's first put
	for i := range 300 {
		key := "other"
		if i%25 == 0 {
			key = "a"
		}
		rev := put(t, b, key, strconv.Itoa(i))
		if first == 0 {
			first = rev
		}
		if key == "a" {
			want = append(want, "put a="+strconv.Itoa(i)+"@"+strconv.FormatInt(rev, 10))
		}
	}
	reversed := slices.Clone(want)
	slices.Reverse(reversed)
	for _, tc := range []struct {
		name string
		q    kv.HistoryRequest
		want []string
	}{
		{"ascending, 3 a page", kv.HistoryRequest{Key: []byte("a"), Limit: 3}, want},
		{"descending, 5 a page", kv.HistoryRequest{Key: []byte("a"), Limit: 5, Descend: true}, reversed},
		{"ascending, 10 revisions scanned a page", kv.HistoryRequest{Key: []byte("a"), MaxScan: 10}, want},
		{"descending, 40 revisions scanned a page", kv.HistoryRequest{Key: []byte("a"), MaxScan: 40, Descend: true}, reversed},
	} {
		got, pages := readAll(t, b, tc.q)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %d pages of %q\nwant %q", tc.name, pages, got, tc.want)
		}
	}
	page, err := b.History(ctx, kv.HistoryRequest{Key: []byte("a"), StartRevision: first + 1, EndRevision: first + 18, MaxScan: 5})
	if err != nil || len(page.Events) != 0 || !page.More || page.Next.Main != first+6 {
		t.Errorf("History(a, %d..%d, scan 5) = %+v, %v; want no event, more from %d", first+1, first+18, page, err, first+6)
	}

	compact := b.Rev() - 100
	must(t, "Compact", b.Compact(ctx, compact, true))
	if _, err := b.History(ctx, kv.HistoryRequest{Key: []byte("a"), StartRevision: compact - 1}); !errors.Is(err, kv.ErrCompacted) {
		t.Errorf("History from below the compact revision = %v, want compacted", err)
	}
	// A descending read of the whole window, begun before: it stops
	// at the compact revision and says there is more, which is gone.
	q := kv.HistoryRequest{Key: []byte("a"), Descend: true, StartRevision: 1, Resume: kv.Revision{Main: b.Rev(), Sub: maxSub}, EndRevision: b.Rev()}
	page, err = b.History(ctx, q)
	if err != nil || !page.More || page.Next.Main >= compact {
		t.Fatalf("a descending read overtaken by the compaction = %+v, %v; want more below %d", page, err, compact)
	}
	for _, ev := range page.Events {
		if ev.KV.ModRevision < compact {
			t.Errorf("a descending page holds %s below the compact revision %d", eventString(ev), compact)
		}
	}
	q.Resume = page.Next
	var ce *kv.CompactedError
	if _, err := b.History(ctx, q); !errors.As(err, &ce) || ce.CompactRevision != compact {
		t.Errorf("the next page = %v, want compacted at %d", err, compact)
	}
}

// TestHistoryWatchesBounded: the etcd watches that requests open to read
// history are at most Options.MaxHistoryWatches at once: with that many
// open, a page of history, and a compaction probe, answer
// too_many_requests without opening another; once one closes, they are
// read.
func TestHistoryWatchesBounded(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	b := openGateway(t, c, "/hb/", func(o *Options) { o.MaxHistoryWatches = 2 })
	ctx := context.Background()
	rev := put(t, b, "a", "1")
	q := kv.HistoryRequest{Key: []byte("a"), StartRevision: rev, Limit: 10, MaxBytes: 1 << 20, MaxScan: 1000}
	if _, err := b.History(ctx, q); err != nil {
		t.Fatalf("History with no watch open = %v", err)
	}
	// Two requests' watches, as if open.
	b.historyWatches <- struct{}{}
	b.historyWatches <- struct{}{}
	if page, err := b.History(ctx, q); !errors.Is(err, errHistoryBusy) {
		t.Fatalf("History with %d watches open = %+v, %v; want too many requests", cap(b.historyWatches), page, err)
	}
	if _, err := b.compactRevision(ctx); !errors.Is(err, errHistoryBusy) {
		t.Fatalf("compactRevision with %d watches open = %v; want too many requests", cap(b.historyWatches), err)
	}
	<-b.historyWatches
	page, err := b.History(ctx, q)
	if err != nil || len(page.Events) != 1 {
		t.Fatalf("History once a watch closed = %+v, %v; want a=1", page, err)
	}
	if n := len(b.historyWatches); n != 1 {
		t.Fatalf("%d watches counted open after the read, want the 1 left", n)
	}
}
