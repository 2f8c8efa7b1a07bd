package etcd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/httpkv/httpkv/internal/etcdtest"
	"github.com/httpkv/httpkv/kv"
)

// receivedKV counts the key and value bytes of the ranges the gateway's
// reads receive from etcd.
type receivedKV struct {
	clientv3.KV
	mu    sync.Mutex
	bytes int
}

func (c *receivedKV) add(r *clientv3.GetResponse) {
	if r == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range r.Kvs {
		c.bytes += len(p.Key) + len(p.Value)
	}
}

func (c *receivedKV) received() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

func (c *receivedKV) Do(ctx context.Context, op clientv3.Op) (clientv3.OpResponse, error) {
	resp, err := c.KV.Do(ctx, op)
	c.add(resp.Get())
	return resp, err
}

func (c *receivedKV) Txn(ctx context.Context) clientv3.Txn { return receivedTxn{c.KV.Txn(ctx), c} }

type receivedTxn struct {
	clientv3.Txn
	c *receivedKV
}

func (t receivedTxn) If(cs ...clientv3.Cmp) clientv3.Txn { return receivedTxn{t.Txn.If(cs...), t.c} }
func (t receivedTxn) Then(ops ...clientv3.Op) clientv3.Txn {
	return receivedTxn{t.Txn.Then(ops...), t.c}
}
func (t receivedTxn) Else(ops ...clientv3.Op) clientv3.Txn {
	return receivedTxn{t.Txn.Else(ops...), t.c}
}
func (t receivedTxn) Commit() (*clientv3.TxnResponse, error) {
	resp, err := t.Txn.Commit()
	if resp != nil {
		for _, r := range resp.Responses {
			if rr := r.GetResponseRange(); rr != nil {
				t.c.add((*clientv3.GetResponse)(rr))
			}
		}
	}
	return resp, err
}

// putMany writes keys prefix/0000 to prefix/(n-1) with values of size
// bytes, a hundred per txn.
func putMany(tb testing.TB, b *Backend, prefix string, n, size int) {
	tb.Helper()
	for i := 0; i < n; i += 100 {
		var ops []kv.Op
		for j := i; j < min(n, i+100); j++ {
			ops = append(ops, kv.Op{Put: &kv.PutRequest{Key: fmt.Appendf(nil, "%s/%04d", prefix, j), Value: []byte(strings.Repeat("v", size))}})
		}
		if _, err := b.Txn(context.Background(), kv.TxnRequest{Success: ops}, nil); err != nil {
			tb.Fatal(err)
		}
	}
}

// TestRefusedListHoldsLittle: a list refused for its size has received
// from etcd a piece of its answer, not the whole of it: its bound is
// checked piece by piece. The gateway's receive limit (16 MiB) lets the
// whole answer (8 MiB) through, so that only the pieces keep it out.
func TestRefusedListHoldsLittle(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	b := openGateway(t, c, "/pieces/", func(o *Options) { o.MaxResponseBytes = 16 << 20 }, withoutCache)
	const keys, size = 1000, 8 << 10
	putMany(t, b, "big", keys, size)
	counted := &receivedKV{KV: b.reads}
	b.reads = counted
	limits := &kv.ReadLimits{MaxBytes: 512 << 10}
	_, err := b.Range(context.Background(), kv.RangeRequest{Key: []byte("big/"), End: []byte("big0"),
		Options: kv.RangeOptions{Limit: keys, Limits: limits}})
	var tl *kv.TooLargeError
	if !errors.As(err, &tl) || tl.MaxBytes != limits.MaxBytes {
		t.Fatalf("Range of %d keys of %d bytes under a bound of %d bytes = %v, want too large", keys, size, limits.MaxBytes, err)
	}
	whole := keys * (len("big/0000") + size)
	if got := counted.received(); got > whole/2 {
		t.Fatalf("the refused list received %d bytes from etcd, of a whole answer of %d", got, whole)
	}
}

// TestRangeInPieces: a range read in pieces answers what one etcd read
// answers: the keys, the count of the whole range, more, at one
// revision, from a page's start key too, and keys only.
func TestRangeInPieces(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	b := openGateway(t, c, "/pieces/", withoutCache)
	putMany(t, b, "k", 3000, 10)
	putMany(t, b, "l", 1, 10)
	cli := c.Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		r    kv.RangeRequest
	}{
		{"every key", kv.RangeRequest{Key: []byte("k/"), End: []byte("k0")}},
		{"a page", kv.RangeRequest{Key: []byte("k/"), End: []byte("k0"), Options: kv.RangeOptions{Limit: 2500}}},
		{"a page from a start key", kv.RangeRequest{Key: []byte("k/"), End: []byte("k0"), From: []byte("k/0100\x00"), Options: kv.RangeOptions{Limit: 2000}}},
		{"the last page", kv.RangeRequest{Key: []byte("k/"), End: []byte("k0"), From: []byte("k/2000"), Options: kv.RangeOptions{Limit: 2000}}},
		{"keys only, from a key on", kv.RangeRequest{Key: []byte("k/1000"), End: []byte{0}, Options: kv.RangeOptions{KeysOnly: true, SortOrder: kv.SortAscend}}},
		{"a past revision", kv.RangeRequest{Key: []byte("k/"), End: []byte("k0"), Options: kv.RangeOptions{Limit: 1000, Revision: 20}}},
	} {
		got, err := b.Range(ctx, tc.r)
		if err != nil {
			t.Fatalf("%s: Range = %v", tc.name, err)
		}
		start := tc.r.Key
		if tc.r.From != nil {
			start = tc.r.From
		}
		opts := []clientv3.OpOption{clientv3.WithRange("/pieces/kv/" + string(tc.r.End)), clientv3.WithLimit(tc.r.Options.Limit), clientv3.WithRev(got.Revision)}
		if string(tc.r.End) == "\x00" {
			opts[0] = clientv3.WithFromKey()
		}
		if tc.r.Options.Revision != 0 {
			opts[2] = clientv3.WithRev(tc.r.Options.Revision)
		}
		want, err := cli.Get(ctx, "/pieces/kv/"+string(start), opts...)
		if err != nil {
			t.Fatal(err)
		}
		count, err := cli.Get(ctx, "/pieces/kv/"+string(tc.r.Key), append(opts[:2:2], opts[2], clientv3.WithCountOnly())...)
		if err != nil {
			t.Fatal(err)
		}
		var wantKeys []string
		for _, p := range want.Kvs {
			wantKeys = append(wantKeys, strings.TrimPrefix(string(p.Key), "/pieces/kv/"))
		}
		if !slices.Equal(keysOf(got.KVs), wantKeys) || got.More != want.More || got.Count != count.Count {
			t.Fatalf("%s: Range = %d keys, more %v, count %d; etcd says %d keys, more %v, count %d",
				tc.name, len(got.KVs), got.More, got.Count, len(wantKeys), want.More, count.Count)
		}
		if tc.r.Options.KeysOnly && len(got.KVs[0].Value) != 0 {
			t.Fatalf("%s: a value came back", tc.name)
		}
	}
}

// TestWholeReadReserves: a range etcd answers in one piece (sorted in
// another order than by key, or filtered by revision) reserves what the
// gateway's receive limit lets through against the bound on answers
// being built, before it reads; refused there, it reads nothing. A range
// read in pieces, and a count, reserve nothing up front (a piece's keys
// are charged as they arrive).
func TestWholeReadReserves(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	b := openGateway(t, c, "/reserve/", func(o *Options) { o.MaxResponseBytes = 4 << 20 }, withoutCache)
	putMany(t, b, "k", 10, 100)
	counted := &receivedKV{KV: b.reads}
	b.reads = counted
	errFull := errors.New("the bound on answers is taken")
	var asked []int64
	limits := func(room int64) *kv.ReadLimits {
		asked = nil
		return &kv.ReadLimits{Hold: func(n int64) error {
			asked = append(asked, n)
			if n > room {
				return errFull
			}
			return nil
		}}
	}
	whole := int64(4<<20) + responseSlack
	ctx := context.Background()
	for _, o := range []kv.RangeOptions{
		{SortOrder: kv.SortDescend},
		{SortTarget: kv.SortByVersion, SortOrder: kv.SortAscend},
		{MinModRevision: 2},
	} {
		o.Limits = limits(whole - 1)
		before := counted.received()
		if _, err := b.Range(ctx, kv.RangeRequest{Key: []byte("k/"), End: []byte("k0"), Options: o}); !errors.Is(err, errFull) {
			t.Fatalf("Range %+v with no room = %v, want the bound's error", o, err)
		}
		if len(asked) != 1 || asked[0] != whole {
			t.Fatalf("Range %+v asked the bound for %v, want %d first", o, asked, whole)
		}
		if got := counted.received() - before; got != 0 {
			t.Fatalf("Range %+v refused by the bound received %d bytes from etcd", o, got)
		}
		o.Limits = limits(whole)
		if res, err := b.Range(ctx, kv.RangeRequest{Key: []byte("k/"), End: []byte("k0"), Options: o}); err != nil || len(res.KVs) == 0 {
			t.Fatalf("Range %+v with room = %d keys, %v", o, len(res.KVs), err)
		}
	}
	for _, o := range []kv.RangeOptions{{}, {CountOnly: true, SortOrder: kv.SortDescend}} {
		o.Limits = limits(whole - 1)
		if _, err := b.Range(ctx, kv.RangeRequest{Key: []byte("k/"), End: []byte("k0"), Options: o}); err != nil {
			t.Fatalf("Range %+v with less room than a whole read = %v, want its answer (nothing reserved)", o, err)
		}
		for _, n := range asked {
			if n > 1<<20 {
				t.Fatalf("Range %+v asked the bound for %v, want only its keys", o, asked)
			}
		}
	}
}
