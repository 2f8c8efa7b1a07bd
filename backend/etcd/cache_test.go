package etcd

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/btree"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/httpkv/httpkv/internal/etcdtest"
	"github.com/httpkv/httpkv/kv"
)

// waitCacheReady waits until b's read cache answers reads: built, and
// kept current by a live upstream watch.
func waitCacheReady(tb testing.TB, b *Backend) {
	tb.Helper()
	waitCache(tb, b, true)
}

// waitCache waits until b's read cache answers reads, or until it does
// not.
func waitCache(tb testing.TB, b *Backend, ready bool) {
	tb.Helper()
	deadline := time.Now().Add(recvTimeout)
	for (b.cache.ready() && b.up.live.Load()) != ready {
		if time.Now().After(deadline) {
			tb.Fatalf("the read cache did not become ready=%v within %v", ready, recvTimeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// cachedRange reads r through b and fails unless the cache answered it.
func cachedRange(tb testing.TB, b *Backend, r kv.RangeRequest) kv.RangeResult {
	tb.Helper()
	before := b.cache.served.Load()
	res, err := b.Range(context.Background(), r)
	if err != nil {
		tb.Fatalf("Range %q..%q %+v = %v", r.Key, r.End, r.Options, err)
	}
	if b.cache.served.Load() == before {
		tb.Fatalf("Range %q..%q %+v was read from etcd, not the cache", r.Key, r.End, r.Options)
	}
	return res
}

// TestCacheAnswersAsEtcd: a range answered from the cache, at the
// current revision or a past one the window holds, is etcd's answer to
// the same range, key for key (values, revisions, versions, leases),
// with its count, more and header revision, for every sort, filter, limit and shape of range. The keys
// have distinct versions, create and mod revisions and values, so that
// every order is one order.
func TestCacheAnswersAsEtcd(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	b := openGateway(t, c, "/cached/")
	cli := c.Client(t)
	ctx := context.Background()
	const keys = 12
	// Keys are created, and given versions and values, in orders other
	// than theirs.
	var first int64
	for j := range keys {
		i := (j * 5) % keys
		for v := range (i*7)%keys + 1 {
			rev := put(t, b, fmt.Sprintf("k/%02d", i), fmt.Sprintf("%02d-%d", (i*11)%keys, v))
			first = cmp.Or(first, rev)
		}
	}
	if _, err := b.Delete(ctx, kv.DeleteRequest{Key: []byte("k/03")}); err != nil {
		t.Fatal(err)
	}
	lease, err := cli.Grant(ctx, 60)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Put(ctx, "/cached/kv/k/99", "leased", clientv3.WithLease(lease.ID)); err != nil {
		t.Fatal(err)
	}
	waitCacheReady(t, b)
	mid := b.Rev() - 20
	var cases []kv.RangeRequest
	for _, shape := range []kv.RangeRequest{
		{Key: []byte("k/"), End: []byte("k0")},
		{Key: []byte("k/05"), End: []byte{0}},
		{Key: []byte("k/07")},
		{Key: []byte("k/03")},
		{Key: []byte("k/05"), End: []byte("k/01")},
		{Key: []byte("k/"), End: []byte("k0"), From: []byte("k/04")},
	} {
		for _, o := range []kv.RangeOptions{
			{},
			{Limit: 3},
			{Limit: 100},
			{KeysOnly: true, Limit: 4},
			{CountOnly: true},
			{SortOrder: kv.SortDescend, Limit: 5},
			{SortTarget: kv.SortByVersion, Limit: 4},
			{SortTarget: kv.SortByVersion, SortOrder: kv.SortDescend, Limit: 4},
			{SortTarget: kv.SortByCreate, SortOrder: kv.SortAscend},
			{SortTarget: kv.SortByMod, SortOrder: kv.SortDescend, Limit: 2},
			{SortTarget: kv.SortByValue, Limit: 3},
			{SortTarget: kv.SortByValue, SortOrder: kv.SortDescend},
			{MinModRevision: mid, Limit: 3},
			{MaxModRevision: mid, SortTarget: kv.SortByMod, SortOrder: kv.SortDescend, Limit: 2},
			{MinCreateRevision: mid, MaxCreateRevision: mid + 30},
			{SortTarget: kv.SortByKey, SortOrder: kv.SortAscend, MinModRevision: mid, Limit: 2},
		} {
			// At the current revision, and at past ones the window
			// holds: keys deleted, created and changed since.
			for _, at := range []int64{0, mid, first + 5} {
				r := shape
				r.Options = o
				r.Options.Revision = at
				cases = append(cases, r)
			}
		}
	}
	for _, r := range cases {
		got := cachedRange(t, b, r)
		want := etcdRange(t, cli, "/cached/kv/", r)
		if g, w := fmt.Sprint(got.KVs, got.Count, got.More, got.Revision), fmt.Sprint(want.KVs, want.Count, want.More, want.Revision); g != w {
			t.Errorf("Range %q..%q from %q %+v\n from the cache: %s\n etcd:           %s", r.Key, r.End, r.From, r.Options, g, w)
		}
	}
}

// etcdRange is r read from etcd directly, under prefix, as the gateway
// answers it (a page from r.From counts the whole range).
func etcdRange(tb testing.TB, cli *clientv3.Client, prefix string, r kv.RangeRequest) kv.RangeResult {
	tb.Helper()
	o := r.Options
	start := r.Key
	if r.From != nil {
		start = r.From
	}
	var opts []clientv3.OpOption
	switch {
	case string(r.End) == "\x00":
		opts = append(opts, clientv3.WithFromKey())
	case len(r.End) > 0:
		opts = append(opts, clientv3.WithRange(prefix+string(r.End)))
	}
	count, err := cli.Get(context.Background(), prefix+string(r.Key), append(slices.Clone(opts), clientv3.WithRev(o.Revision), clientv3.WithCountOnly())...)
	if err != nil {
		tb.Fatal(err)
	}
	opts = append(opts, clientv3.WithRev(cmp.Or(o.Revision, count.Header.Revision)), clientv3.WithLimit(o.Limit),
		clientv3.WithSort(clientv3.SortTarget(o.SortTarget), clientv3.SortOrder(o.SortOrder)),
		clientv3.WithMinModRev(o.MinModRevision), clientv3.WithMaxModRev(o.MaxModRevision),
		clientv3.WithMinCreateRev(o.MinCreateRevision), clientv3.WithMaxCreateRev(o.MaxCreateRevision))
	if o.KeysOnly {
		opts = append(opts, clientv3.WithKeysOnly())
	}
	if o.CountOnly {
		opts = append(opts, clientv3.WithCountOnly())
	}
	resp, err := cli.Get(context.Background(), prefix+string(start), opts...)
	if err != nil {
		tb.Fatal(err)
	}
	res := kv.RangeResult{Count: count.Count, More: resp.More, Revision: resp.Header.Revision}
	for _, p := range resp.Kvs {
		e := toKV(p)
		e.Key = e.Key[len(prefix):]
		res.KVs = append(res.KVs, e)
	}
	return res
}

// TestCacheReadsAreCurrent: a read answered from the cache sees every
// write etcd made before it began, the writes of other clients of etcd
// too, in the namespace or out of it (whose revisions the header
// reports): the cache is asked at a revision etcd names for each batch
// of reads.
func TestCacheReadsAreCurrent(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	b := openGateway(t, c, "/current/")
	cli := c.Client(t)
	ctx := context.Background()
	put(t, b, "k", "first")
	waitCacheReady(t, b)
	for i := range 20 {
		resp, err := cli.Put(ctx, "/current/kv/k", fmt.Sprint(i))
		if err != nil {
			t.Fatal(err)
		}
		res := cachedRange(t, b, kv.RangeRequest{Key: []byte("k")})
		if len(res.KVs) != 1 || string(res.KVs[0].Value) != fmt.Sprint(i) || res.Revision < resp.Header.Revision {
			t.Fatalf("after an outside put at %d, the cache answered %v at %d", resp.Header.Revision, res.KVs, res.Revision)
		}
		// A write out of the namespace: no event reaches the gateway, only
		// a revision, which the read must have reached.
		other, err := cli.Put(ctx, "/elsewhere", fmt.Sprint(i))
		if err != nil {
			t.Fatal(err)
		}
		if res := cachedRange(t, b, kv.RangeRequest{Key: []byte("k")}); res.Revision < other.Header.Revision {
			t.Fatalf("after a put elsewhere at %d, the cache answered at %d", other.Header.Revision, res.Revision)
		}
	}
}

// TestCacheOutgrown: a namespace larger than the cache's bound is read
// from etcd, correctly, and the cache is not built again.
func TestCacheOutgrown(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	b := openGateway(t, c, "/outgrown/", func(o *Options) { o.ReadCacheBytes = 8 << 10 })
	put(t, b, "small", "v")
	waitCacheReady(t, b)
	putMany(t, b, "big", 100, 200)
	waitCache(t, b, false)
	served := b.cache.served.Load()
	res, err := b.Range(context.Background(), kv.RangeRequest{Key: []byte("big/"), End: []byte("big0"), Options: kv.RangeOptions{CountOnly: true}})
	if err != nil || res.Count != 100 {
		t.Fatalf("Range past the cache's bound = %d keys, %v; want 100", res.Count, err)
	}
	if b.cache.served.Load() != served {
		t.Fatal("the cache answered past its bound")
	}
}

// TestCacheSkippedWhileWatchDown: while the upstream watch is not live,
// the cache falls behind etcd, and reads go to etcd at once rather than
// wait for it.
func TestCacheSkippedWhileWatchDown(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	b := openGateway(t, c, "/down/")
	put(t, b, "k", "v")
	waitCacheReady(t, b)
	// As the watch does when it breaks; it is not set again until a new
	// watch is accepted.
	b.up.live.Store(false)
	served := b.cache.served.Load()
	res, err := b.Range(context.Background(), kv.RangeRequest{Key: []byte("k")})
	if err != nil || len(res.KVs) != 1 {
		t.Fatalf("Range = %v, %v", res.KVs, err)
	}
	if b.cache.served.Load() != served {
		t.Fatal("the cache answered while the upstream watch was down")
	}
}

// cacheOf returns a ready cache holding kvs at revision rev.
func cacheOf(rev int64, kvs ...kv.KeyValue) *readCache {
	c := newReadCache(1<<30, func(error) {})
	c.keys, c.rev = btree.NewG(32, keyLess), rev
	for i := range kvs {
		c.keys.ReplaceOrInsert(&kvs[i])
	}
	return c
}

// TestPastReadWindowBehind: a cache built from a list at a revision the
// window has not reached yet cannot undo the changes between the two,
// and does not answer a read at a revision before the list.
func TestPastReadWindowBehind(t *testing.T) {
	// a was put at 93 ("old") and 98 ("new"); the cache listed at 100,
	// the window holds up to 90.
	c := cacheOf(100, kv.KeyValue{Key: []byte("a"), Value: []byte("new"), CreateRevision: 93, ModRevision: 98, Version: 2})
	win := newWindow(90, 1<<20)
	r := &kv.RangeRequest{Key: []byte("a"), Options: kv.RangeOptions{Revision: 95}}
	if res, ok, err := c.rangeAt(context.Background(), 95, r, win, time.Second); ok || err != nil {
		t.Fatalf("read at 95 with the window at 90 = %v, %v, %v; want no answer from the cache", res.KVs, ok, err)
	}
	// Once the window holds those revisions, the read is answered.
	win.add(93, []kv.Event{{KV: kv.KeyValue{Key: []byte("a"), Value: []byte("old"), CreateRevision: 93, ModRevision: 93, Version: 1}}})
	win.add(98, []kv.Event{{KV: kv.KeyValue{Key: []byte("a"), Value: []byte("new"), CreateRevision: 93, ModRevision: 98, Version: 2},
		PrevKV: &kv.KeyValue{Key: []byte("a"), Value: []byte("old"), CreateRevision: 93, ModRevision: 93, Version: 1}}})
	win.advance(100)
	res, ok, err := c.rangeAt(context.Background(), 95, r, win, time.Second)
	if !ok || err != nil || len(res.KVs) != 1 || string(res.KVs[0].Value) != "old" || res.Revision != 100 {
		t.Fatalf("read at 95 with the window at 100 = %v at %d, %v, %v; want a=old at 100", res.KVs, res.Revision, ok, err)
	}
}

// TestCacheSnapshotUnchanged: a read walks a snapshot of the keys that
// the upstream watch's changes do not reach, and which does not hold
// them up.
func TestCacheSnapshotUnchanged(t *testing.T) {
	c := cacheOf(5, kv.KeyValue{Key: []byte("a"), Value: []byte("v1"), ModRevision: 5, CreateRevision: 5, Version: 1})
	before, rev := c.snapshot()
	c.apply([]kv.Changes{{Revision: 6, Events: []kv.Event{{KV: kv.KeyValue{Key: []byte("a"), Value: []byte("v2"), ModRevision: 6, CreateRevision: 5, Version: 2}}}}})
	if e, _ := before.Get(&kv.KeyValue{Key: []byte("a")}); rev != 5 || string(e.Value) != "v1" {
		t.Fatalf("the snapshot taken at %d holds a=%s after a change, want v1", rev, e.Value)
	}
	after, rev := c.snapshot()
	if e, _ := after.Get(&kv.KeyValue{Key: []byte("a")}); rev != 6 || string(e.Value) != "v2" {
		t.Fatalf("a snapshot taken after the change holds a=%s at %d, want v2 at 6", e.Value, rev)
	}
}
