package etcd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/httpkv/httpkv/internal/etcdtest"
	"github.com/httpkv/httpkv/kv"
)

func keysOf(kvs []kv.KeyValue) []string {
	var out []string
	for _, k := range kvs {
		out = append(out, string(k.Key))
	}
	return out
}

// TestKV covers reads and writes through the gateway: a put, a range by
// pages from a start key counting the whole range at the page's revision,
// a delete that deletes nothing and makes no revision, and a nested txn
// whose writes share one revision.
func TestKV(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	b := openGateway(t, c, "/t/")
	ctx := context.Background()
	for _, k := range []string{"a", "b", "c", "d"} {
		put(t, b, k, "v"+k)
	}
	rev := b.Rev()
	all := kv.RangeRequest{Key: []byte{0}, End: []byte{0}, Options: kv.RangeOptions{Limit: 2}}
	res, err := b.Range(ctx, all)
	if err != nil || !slices.Equal(keysOf(res.KVs), []string{"a", "b"}) || !res.More || res.Count != 4 || res.Revision != rev {
		t.Fatalf("Range(every key, limit 2) = %+v, %v; want a, b, more, count 4 at %d", res, err, rev)
	}
	put(t, b, "bb", "new")
	page2 := all
	page2.From, page2.Options.Revision = []byte("b\x00"), rev
	res, err = b.Range(ctx, page2)
	if err != nil || !slices.Equal(keysOf(res.KVs), []string{"c", "d"}) || res.More || res.Count != 4 {
		t.Fatalf("Range(from b\\x00 at %d) = %+v, %v; want c, d and the count 4 of the page's revision", rev, res, err)
	}

	del, err := b.Delete(ctx, kv.DeleteRequest{Key: []byte("nothing")})
	if err != nil || del.Deleted != 0 || del.Revision != rev+1 {
		t.Fatalf("Delete(nothing) = %+v, %v; want nothing deleted at the current revision %d", del, err, rev+1)
	}

	txn := kv.TxnRequest{
		Compare: []kv.Compare{{Key: []byte("a"), Target: kv.CompareValue, Result: kv.CompareEqual, Value: []byte("va")}},
		Success: []kv.Op{
			{Put: &kv.PutRequest{Key: []byte("x"), Value: []byte("1"), PrevKV: true}},
			{Txn: &kv.TxnRequest{
				Compare: []kv.Compare{{Key: []byte("zz"), Target: kv.CompareVersion, Result: kv.CompareGreater, Number: 0}},
				Success: []kv.Op{{Put: &kv.PutRequest{Key: []byte("no"), Value: []byte("-")}}},
				Failure: []kv.Op{{Delete: &kv.DeleteRequest{Key: []byte("c"), End: []byte("e"), PrevKV: true}}, {Range: &kv.RangeOp{Key: []byte("a")}}},
			}},
		},
	}
	tr, err := b.Txn(ctx, txn, nil)
	if err != nil || !tr.Succeeded || len(tr.Responses) != 2 {
		t.Fatalf("Txn = %+v, %v", tr, err)
	}
	inner := tr.Responses[1].Txn
	if tr.Responses[0].Put.Revision != tr.Revision || inner == nil || inner.Succeeded ||
		inner.Responses[0].Delete.Deleted != 2 || len(inner.Responses[0].Delete.PrevKVs) != 2 ||
		string(inner.Responses[1].Range.KVs[0].Value) != "va" {
		t.Fatalf("Txn responses = %+v, inner %+v", tr.Responses, inner)
	}
	res, err = b.Range(ctx, kv.RangeRequest{Key: []byte("c"), End: []byte("y")})
	if err != nil || !slices.Equal(keysOf(res.KVs), []string{"x"}) || res.KVs[0].ModRevision != tr.Revision {
		t.Fatalf("after the txn, Range(c, y) = %+v, %v; want x at the txn's revision %d", res, err, tr.Revision)
	}
}

// TestErrors: etcd's refusals come back as package kv's errors, those
// the embedded store gives.
func TestErrors(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	b := openGateway(t, c, "")
	ctx := context.Background()
	for range 5 {
		put(t, b, "k", "v")
	}
	if err := b.Compact(ctx, 4, true); err != nil {
		t.Fatalf("Compact(4) = %v", err)
	}
	// The first grant writes the lease's record: a revision of its own.
	grantedTwice := grantTwice(b)
	cur := b.Rev()
	var ce *kv.CompactedError
	for name, tc := range map[string]struct {
		err  error
		want error
	}{
		"range at a future revision": {rangeErr(b, cur+10), kv.ErrFutureRevision},
		"range below the compaction": {rangeErr(b, 2), kv.ErrCompacted},
		"compact again at it":        {b.Compact(ctx, 4, false), kv.ErrCompacted},
		"compact in the future":      {b.Compact(ctx, cur+10, false), kv.ErrFutureRevision},
		"put with no lease":          {putErr(b, kv.PutRequest{Key: []byte("k"), Lease: 12345}), kv.ErrLeaseNotFound},
		"ignore_value of no key":     {putErr(b, kv.PutRequest{Key: []byte("none"), IgnoreValue: true}), kv.ErrKeyNotFound},
		"an empty key":               {putErr(b, kv.PutRequest{}), kv.ErrInvalidArgument},
		"a txn putting one key twice": {txnErr(b, kv.TxnRequest{Success: []kv.Op{
			{Put: &kv.PutRequest{Key: []byte("a")}}, {Put: &kv.PutRequest{Key: []byte("a")}},
		}}), kv.ErrDuplicateKey},
		"a lease granted twice": {grantedTwice, kv.ErrLeaseExists},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: %v, want %v", name, tc.err, tc.want)
		}
		if errors.Is(tc.want, kv.ErrCompacted) && (!errors.As(tc.err, &ce) || ce.CompactRevision != 4) {
			t.Errorf("%s: %v, want compact revision 4", name, tc.err)
		}
	}
	if rev := b.Rev(); rev != cur {
		t.Errorf("refused writes moved the revision from %d to %d", cur, rev)
	}
}

func rangeErr(b *Backend, rev int64) error {
	_, err := b.Range(context.Background(), kv.RangeRequest{Key: []byte("k"), Options: kv.RangeOptions{Revision: rev}})
	return err
}

func putErr(b *Backend, r kv.PutRequest) error {
	_, err := b.Put(context.Background(), r, nil)
	return err
}

func txnErr(b *Backend, r kv.TxnRequest) error {
	_, err := b.Txn(context.Background(), r, nil)
	return err
}

func grantTwice(b *Backend) error {
	if _, err := b.Grant(context.Background(), 77, 60); err != nil {
		return err
	}
	_, err := b.Grant(context.Background(), 77, 60)
	return err
}

// TestNamespaces: two deployments on one cluster see their own keys only,
// under their namespaces' "kv/" prefix in etcd, which the API never
// shows; a range of every key and a watch of every key stay inside.
func TestNamespaces(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	one, two := openGateway(t, c, "/one/"), openGateway(t, c, "/two/")
	ctx := context.Background()
	st, err := two.Watch(ctx, kv.WatchRequest{Key: []byte{0}, End: []byte{0}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	put(t, one, "k", "1")
	last := put(t, two, "k", "2")
	for _, g := range []struct {
		b    *Backend
		want string
	}{{one, "1"}, {two, "2"}} {
		res, err := g.b.Range(ctx, kv.RangeRequest{Key: []byte{0}, End: []byte{0}})
		if err != nil || len(res.KVs) != 1 || string(res.KVs[0].Key) != "k" || string(res.KVs[0].Value) != g.want {
			t.Errorf("Range(every key) = %+v, %v; want k=%s alone", res, err, g.want)
		}
	}
	if got, _ := recv(t, st, last); fmt.Sprint(got) != fmt.Sprintf("[put k=2@%d]", last) {
		t.Errorf("a watch of every key of /two/ got %q", got)
	}
	raw, err := c.Client(t).Get(ctx, "", clientv3.WithFromKey(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, p := range raw.Kvs {
		keys = append(keys, string(p.Key))
	}
	if want := []string{"/one/deployment", "/one/kv/k", "/two/deployment", "/two/kv/k"}; !slices.Equal(keys, want) {
		t.Errorf("etcd holds %q, want %q", keys, want)
	}
}

// TestCallerGone: a call whose caller gives up returns the caller's
// reason, not etcd's error of a canceled request.
func TestCallerGone(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	b := openGateway(t, c, "/gone/")
	why := errors.New("the caller is shutting down")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(why)
	if _, err := b.Range(ctx, kv.RangeRequest{Key: []byte("k")}); !errors.Is(err, why) {
		t.Errorf("Range with a context canceled for a reason = %v, want the reason", err)
	}
	if _, err := b.History(ctx, kv.HistoryRequest{Key: []byte("k")}); !errors.Is(err, why) {
		t.Errorf("History with a context canceled for a reason = %v, want the reason", err)
	}
}
