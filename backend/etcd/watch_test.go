package etcd

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/httpkv/httpkv/internal/etcdtest"
	"github.com/httpkv/httpkv/kv"
)

func mustWatch(tb testing.TB, b *Backend, r kv.WatchRequest) kv.WatchStream {
	tb.Helper()
	st, err := b.Watch(context.Background(), r)
	if err != nil {
		tb.Fatalf("Watch(%+v) = %v", r, err)
	}
	tb.Cleanup(st.Close)
	return st
}

// TestWatchBehindTheWindow: with a window that holds nothing, watchers
// from past revisions are caught up from etcd itself, previous versions
// included, and then follow the live stream without a gap or a
// duplicate.
func TestWatchBehindTheWindow(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	b := openGateway(t, c, "/w/", func(o *Options) { o.WindowBytes = 1 })
	var want []string
	first := int64(0)
	for i := range 40 {
		rev := put(t, b, "k"+strconv.Itoa(i%3), strconv.Itoa(i))
		if first == 0 {
			first = rev
		}
		ev := fmt.Sprintf("put k%d=%d@%d", i%3, i, rev)
		if i >= 3 {
			ev += fmt.Sprintf(" (was %d)", i-3)
		}
		want = append(want, ev)
	}
	sts := []kv.WatchStream{
		mustWatch(t, b, kv.WatchRequest{Key: []byte("k"), End: []byte("l"), StartRevision: first, PrevKV: true}),
		mustWatch(t, b, kv.WatchRequest{Key: []byte("k"), End: []byte("l"), StartRevision: first + 20, PrevKV: true}),
	}
	last := put(t, b, "k1", "live")
	want = append(want, fmt.Sprintf("put k1=live@%d (was 37)", last))
	for i, st := range sts {
		got, final := recv(t, st, last)
		if exp := want[i*20:]; !slices.Equal(got, exp) || final != nil {
			t.Errorf("watch %d got %q (final %+v)\nwant %q", i, got, final, exp)
		}
	}
	if n, _ := b.win.stats(); n > 1 {
		t.Errorf("the window holds %d revisions, want at most 1 within a bound of one byte", n)
	}
}

// TestWatchCompacted: a watch from below etcd's compact revision ends
// with a compacted response that says where; one from exactly there gets
// that revision's events.
func TestWatchCompacted(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	b := openGateway(t, c, "/c/")
	for i := range 5 {
		put(t, b, "k", strconv.Itoa(i))
	}
	compact := b.Rev() - 1
	// Compacted by another client of etcd: the gateway learns of it from
	// etcd, not from its own Compact.
	if _, err := c.Client(t).Compact(context.Background(), compact, clientv3.WithCompactPhysical()); err != nil {
		t.Fatal(err)
	}
	_, final := recv(t, mustWatch(t, b, kv.WatchRequest{Key: []byte("k"), StartRevision: compact - 1}), b.Rev())
	if final == nil || final.CompactRevision != compact {
		t.Fatalf("a watch from %d below the compact revision %d ended with %+v", compact-1, compact, final)
	}
	got, _ := recv(t, mustWatch(t, b, kv.WatchRequest{Key: []byte("k"), StartRevision: compact}), b.Rev())
	if want := []string{fmt.Sprintf("put k=3@%d", compact), fmt.Sprintf("put k=4@%d", compact+1)}; !slices.Equal(got, want) {
		t.Fatalf("a watch from the compact revision got %q, want %q", got, want)
	}
}

// TestWatchWaitsForRevision: a client writes through gateway A, then
// watches from its revision on gateway B, which may not have seen it: the
// watch waits for it and misses nothing. A watch from now on A after a
// write through A never gets that write.
func TestWatchWaitsForRevision(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	a, b := openGateway(t, c, "/r/"), openGateway(t, c, "/r/")
	for i := range 20 {
		rev := put(t, a, "k", strconv.Itoa(i))
		st := mustWatch(t, b, kv.WatchRequest{Key: []byte("k"), StartRevision: rev})
		if got, _ := recv(t, st, rev); !slices.Equal(got, []string{fmt.Sprintf("put k=%d@%d", i, rev)}) {
			t.Fatalf("watch on B from %d written through A got %q", rev, got)
		}
		st.Close()
		now := mustWatch(t, a, kv.WatchRequest{Key: []byte("k")})
		if now.StartRevision() != rev+1 || now.Revision() != rev {
			t.Fatalf("a watch from now on A after its write at %d starts at %d (revision %d), want %d", rev, now.StartRevision(), now.Revision(), rev+1)
		}
		now.Close()
	}
}

// TestOneUpstreamWatch: however many watchers a gateway serves, etcd
// holds one watch of its keys for it, and one of its auth state (etcd's
// own count, from its metrics).
func TestOneUpstreamWatch(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	b := openGateway(t, c, "/fan/")
	before := etcdWatchers(t, c)
	var sts []kv.WatchStream
	for i := range 300 {
		sts = append(sts, mustWatch(t, b, kv.WatchRequest{Key: []byte("k" + strconv.Itoa(i%10))}))
	}
	var last int64
	for i := range 10 {
		last = put(t, b, "k"+strconv.Itoa(i), "v")
	}
	for i, st := range sts {
		if got, _ := recv(t, st, last-9+int64(i%10)); len(got) != 1 {
			t.Fatalf("watcher %d got %q, want one event", i, got)
		}
	}
	if got := etcdWatchers(t, c); got != before {
		t.Errorf("etcd holds %d watchers with 300 watchers on the gateway, %d before: want no more", got, before)
	}
	if before != gatewayWatches {
		t.Errorf("etcd holds %d watchers for one gateway, want %d", before, gatewayWatches)
	}
}

// gatewayWatches is the watches a gateway holds on etcd: its keys' and
// its auth state's.
const gatewayWatches = 2

// etcdWatchers reads etcd's count of its watchers from its metrics,
// waiting for the compaction probes and catch-up watches to end.
func etcdWatchers(tb testing.TB, c *etcdtest.Cluster) int {
	tb.Helper()
	var n int
	for deadline := time.Now().Add(recvTimeout); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		n = readMetric(tb, c.Endpoints()[0]+"/metrics", "etcd_debugging_mvcc_watcher_total")
		if n == gatewayWatches {
			break
		}
	}
	return n
}

func readMetric(tb testing.TB, url, name string) int {
	tb.Helper()
	resp, err := http.Get(url)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				tb.Fatalf("%s %q: %v", name, v, err)
			}
			return int(f)
		}
	}
	tb.Fatalf("no %s in %s", name, url)
	return 0
}

// TestWatchFromTheFuture: a watch from a revision etcd has not reached
// gets the events from there on, none before.
func TestWatchFromTheFuture(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	b := openGateway(t, c, "/future/")
	from := b.Rev() + 3
	st := mustWatch(t, b, kv.WatchRequest{Key: []byte("k"), StartRevision: from})
	var want []string
	for i := range 5 {
		rev := put(t, b, "k", strconv.Itoa(i))
		if rev >= from {
			want = append(want, fmt.Sprintf("put k=%d@%d", i, rev))
		}
	}
	if got, _ := recv(t, st, b.Rev()); !slices.Equal(got, want) {
		t.Fatalf("a watch from %d got %q, want %q", from, got, want)
	}
}

// TestWatchFromNowAfterEtcdsRevision: a watch from now starts after
// etcd's current revision, even when the gateway has not heard of it yet
// (changes outside its namespace reach it only at the upstream watch's
// next progress notification, here not within the test): a client that
// read at etcd's revision R elsewhere and then watches from now gets a
// created message at R, and then exactly the changes after R.
func TestWatchFromNowAfterEtcdsRevision(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	slow := func(o *Options) { o.ProgressInterval = time.Hour }
	a := openGateway(t, c, "/lag/a/", slow)
	other := openGateway(t, c, "/lag/b/", slow)
	cli := c.Client(t)
	for i := range 5 {
		// Move etcd on outside a's namespace, so that a's revision lags.
		put(t, other, "k", strconv.Itoa(i))
		resp, err := cli.Get(context.Background(), "/lag/a/"+keysPrefix+"k")
		if err != nil {
			t.Fatal(err)
		}
		read := resp.Header.Revision
		if a.Rev() >= read {
			t.Fatalf("gateway a is at revision %d, not behind etcd's %d: the test shows nothing", a.Rev(), read)
		}
		st := mustWatch(t, a, kv.WatchRequest{Key: []byte("k")})
		if st.Revision() != read || st.StartRevision() != read+1 {
			t.Fatalf("a watch from now after a read at etcd's revision %d is at revision %d, from %d; want %d, from %d",
				read, st.Revision(), st.StartRevision(), read, read+1)
		}
		// The next change in a's namespace is the watch's first event.
		wr, err := cli.Put(context.Background(), "/lag/a/"+keysPrefix+"k", strconv.Itoa(i))
		if err != nil {
			t.Fatal(err)
		}
		want := []string{fmt.Sprintf("put k=%d@%d", i, wr.Header.Revision)}
		if got, _ := recv(t, st, wr.Header.Revision); !slices.Equal(got, want) {
			t.Fatalf("the watch from now at %d got %q, want %q", read, got, want)
		}
		st.Close()
		// Move etcd on again without a hearing of it.
		put(t, other, "k", "after")
	}
}
