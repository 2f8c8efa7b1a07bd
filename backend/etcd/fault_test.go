package etcd

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/httpkv/httpkv/internal/etcdtest"
	"github.com/httpkv/httpkv/kv"
)

// writer puts keys through a gateway until stopped, retrying each put
// until it is acknowledged, and records the acknowledged revisions.
type writer struct {
	b    *Backend
	stop chan struct{}
	done chan struct{}

	mu    sync.Mutex
	acked map[int64]string // revision: key
	errs  int
}

func startWriter(b *Backend) *writer {
	w := &writer{b: b, stop: make(chan struct{}), done: make(chan struct{}), acked: map[int64]string{}}
	go w.run()
	return w
}

func (w *writer) run() {
	defer close(w.done)
	for i := 0; ; i++ {
		key := "k" + strconv.Itoa(i%50)
		for {
			select {
			case <-w.stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			res, err := w.b.Put(ctx, kv.PutRequest{Key: []byte(key), Value: []byte(strconv.Itoa(i))}, nil)
			cancel()
			w.mu.Lock()
			if err == nil {
				w.acked[res.Revision] = key
			} else {
				w.errs++
			}
			w.mu.Unlock()
			if err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// waitAcked waits until n more puts than before have been acknowledged.
func (w *writer) waitAcked(tb testing.TB, n int) {
	tb.Helper()
	w.mu.Lock()
	want := len(w.acked) + n
	w.mu.Unlock()
	for deadline := time.Now().Add(recvTimeout); ; time.Sleep(10 * time.Millisecond) {
		w.mu.Lock()
		got := len(w.acked)
		w.mu.Unlock()
		if got >= want {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("only %d puts acknowledged, want %d", got, want)
		}
	}
}

func (w *writer) finish() {
	close(w.stop)
	<-w.done
}

// TestMemberKills kills an etcd member, then the leader, with SIGKILL,
// while a gateway takes writes and serves watchers. Every watcher gets
// exactly etcd's history of the namespace, in order, with no gap, no
// duplicate and no revision split, every acknowledged write among it:
// the upstream watch resumes where it broke, and the watchers notice
// only delay.
func TestMemberKills(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 3)
	b := openGateway(t, c, "/f/")
	start := b.Rev() + 1
	var sts []kv.WatchStream
	for i := range 1000 {
		r := kv.WatchRequest{Key: []byte("k"), End: []byte("l")}
		if i%10 == 0 {
			r = kv.WatchRequest{Key: []byte("k" + strconv.Itoa(i/10%50))}
		}
		sts = append(sts, mustWatch(t, b, r))
	}
	w := startWriter(b)
	w.waitAcked(t, 50)
	leader := c.Leader()
	follower := (leader + 1) % c.Size()
	c.Kill(follower)
	w.waitAcked(t, 50)
	c.Restart(follower)
	w.waitAcked(t, 20)
	leader = c.Leader()
	c.Kill(leader)
	w.waitAcked(t, 50)
	c.Restart(leader)
	w.waitAcked(t, 20)
	w.finish()
	last := put(t, b, "k0", "last")

	truth := etcdHistory(t, c, "/f/kv/", start, last)
	acked := 0
	for rev := range w.acked {
		if i, ok := slices.BinarySearchFunc(truth, rev, func(e revEvent, r int64) int { return int(e.rev - r) }); !ok || truth[i].key != w.acked[rev] {
			t.Errorf("put of %s acknowledged at revision %d is not in etcd's history", w.acked[rev], rev)
		}
		acked++
	}
	t.Logf("%d puts acknowledged, %d failed attempts retried, %d revisions in etcd", acked, w.errs, len(truth))
	for i, st := range sts {
		want := truth
		if i%10 == 0 {
			want = nil
			for _, e := range truth {
				if e.key == "k"+strconv.Itoa(i/10%50) {
					want = append(want, e)
				}
			}
		}
		got, final := recv(t, st, want[len(want)-1].rev)
		var exp []string
		for _, e := range want {
			exp = append(exp, e.String())
		}
		if final != nil || !slices.Equal(got, exp) {
			t.Fatalf("watcher %d got %d events (final %+v), want etcd's %d:\ngot  %q\nwant %q", i, len(got), final, len(exp), got, exp)
		}
	}
}

// revEvent is a put as etcd recorded it.
type revEvent struct {
	rev        int64
	key, value string
}

func (e revEvent) String() string { return fmt.Sprintf("put %s=%s@%d", e.key, e.value, e.rev) }

// etcdHistory reads the puts under prefix at revisions from to to from
// etcd directly.
func etcdHistory(tb testing.TB, c *etcdtest.Cluster, prefix string, from, to int64) []revEvent {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), recvTimeout)
	defer cancel()
	var out []revEvent
	for resp := range c.Client(tb).Watch(ctx, prefix, clientv3.WithPrefix(), clientv3.WithRev(from)) {
		if err := resp.Err(); err != nil {
			tb.Fatalf("etcd's history from %d: %v", from, err)
		}
		for _, ev := range resp.Events {
			out = append(out, revEvent{ev.Kv.ModRevision, string(ev.Kv.Key[len(prefix):]), string(ev.Kv.Value)})
		}
		if len(out) > 0 && out[len(out)-1].rev >= to {
			return out
		}
	}
	tb.Fatalf("etcd's history from %d ended before %d", from, to)
	return nil
}

// TestUpstreamLost: a gateway whose one member goes away while the
// cluster writes and compacts past what the gateway has seen finds, when
// the member is back, that its upstream watch's next revision is gone.
// Its watchers that needed those revisions end with a compacted response
// at etcd's compact revision; a watch opened afterwards follows.
func TestUpstreamLost(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 3)
	member := (c.Leader() + 1) % c.Size()
	b := openGateway(t, c, "/lost/", func(o *Options) { o.Endpoints = c.Endpoints()[member : member+1] })
	put(t, b, "k", "before")
	st := mustWatch(t, b, kv.WatchRequest{Key: []byte("k")})
	c.Kill(member)
	cli := c.Client(t)
	ctx := context.Background()
	// A key written in the revisions lost: the read cache, which
	// missed it, is built again.
	if _, err := cli.Put(ctx, "/lost/kv/other", "x"); err != nil {
		t.Fatal(err)
	}
	var rev int64
	for i := range 5 {
		resp, err := cli.Put(ctx, "/lost/kv/k", strconv.Itoa(i))
		if err != nil {
			t.Fatal(err)
		}
		rev = resp.Header.Revision
	}
	if _, err := cli.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil {
		t.Fatal(err)
	}
	c.Restart(member)
	_, final := recv(t, st, rev+100)
	if final == nil || final.CompactRevision != rev {
		t.Fatalf("the watcher across the lost revisions ended with %+v, want compacted at %d", final, rev)
	}
	// A watch from now reads etcd's revision, and a put writes: both
	// only once the prober has seen the member back, which the upstream
	// watch may see first.
	waitServing(t, b, true)
	after := mustWatch(t, b, kv.WatchRequest{Key: []byte("k")})
	last := put(t, b, "k", "after")
	if got, final := recv(t, after, last); !slices.Equal(got, []string{fmt.Sprintf("put k=after@%d", last)}) {
		t.Fatalf("a watch opened after got %q, then %+v", got, final)
	}
	waitCacheReady(t, b)
	if res := cachedRange(t, b, kv.RangeRequest{Key: []byte("other")}); len(res.KVs) != 1 || string(res.KVs[0].Value) != "x" {
		t.Fatalf("the read cache built again answered %v for a key written in the lost revisions", res.KVs)
	}
}
