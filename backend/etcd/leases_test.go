package etcd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/httpkv/httpkv/auth"
	"github.com/httpkv/httpkv/internal/etcdtest"
	"github.com/httpkv/httpkv/kv"
)

// rawGrant grants a lease with the ID through etcd itself, as a client of
// etcd's own would, outside any deployment.
func rawGrant(tb testing.TB, cli *clientv3.Client, id int64) {
	tb.Helper()
	resp, err := clientv3.RetryLeaseClient(cli).LeaseGrant(context.Background(), &pb.LeaseGrantRequest{ID: id, TTL: 600})
	if err != nil || resp.Error != "" {
		tb.Fatalf("LeaseGrant(%d) through etcd = %v, %v", id, resp, err)
	}
}

// leaseAlive reports whether etcd holds the lease, whoever granted it.
func leaseAlive(tb testing.TB, cli *clientv3.Client, id int64) bool {
	tb.Helper()
	resp, err := cli.TimeToLive(context.Background(), clientv3.LeaseID(id))
	if err != nil {
		tb.Fatalf("TimeToLive(%d) through etcd = %v", id, err)
	}
	return resp.TTL > 0
}

// allLeases lists every lease of b, page by page.
func allLeases(tb testing.TB, b *Backend, limit int) []int64 {
	tb.Helper()
	var all []int64
	var after int64
	for {
		ids, more, err := b.Leases(context.Background(), after, limit)
		if err != nil || len(ids) > limit {
			tb.Fatalf("Leases(after %d, limit %d) = %v, %v, %v", after, limit, ids, more, err)
		}
		all = append(all, ids...)
		if !more {
			return all
		}
		after = ids[len(ids)-1]
	}
}

// TestLeasesOfTheNamespace: each deployment sees the leases granted
// through its namespace only. Leases of another namespace, and leases
// granted through etcd itself (an ID above 2^53-1 among them), are not
// listed, read, renewed, revoked or attached to: each call answers
// kv.ErrLeaseNotFound and changes nothing. Before, a revoke through one
// deployment of another's lease deleted that deployment's keys, whatever
// the guard: the guard was shown only the revoking namespace's keys, none.
func TestLeasesOfTheNamespace(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	one, two := openGateway(t, c, "/one/"), openGateway(t, c, "/two/")
	cli := c.Client(t)
	ctx := context.Background()
	mine, err := one.Grant(ctx, 0, 600)
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := two.Grant(ctx, 7, 600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := two.Put(ctx, kv.PutRequest{Key: []byte("held"), Value: []byte("v"), Lease: theirs.ID}, nil); err != nil {
		t.Fatal(err)
	}
	const big = 1418812132488573291 // above 2^53-1
	rawGrant(t, cli, big)
	rawGrant(t, cli, 4242)

	if got := allLeases(t, one, 1); !slices.Equal(got, []int64{mine.ID}) {
		t.Errorf("/one/'s leases = %v, want its own %d alone", got, mine.ID)
	}
	if got := allLeases(t, two, 1000); !slices.Equal(got, []int64{7}) {
		t.Errorf("/two/'s leases = %v, want its own 7 alone", got)
	}
	denyAll := func([][]byte) error { return auth.ErrPermissionDenied }
	for _, id := range []int64{7, 4242, big, -1} {
		calls := map[string]error{}
		_, calls["TimeToLive"] = one.TimeToLive(ctx, id, false)
		_, calls["TimeToLive with keys"] = one.TimeToLive(ctx, id, true)
		_, calls["KeepAlive"] = one.KeepAlive(ctx, id)
		_, calls["Revoke"] = one.Revoke(ctx, id, nil)
		_, calls["Revoke with a guard"] = one.Revoke(ctx, id, denyAll)
		_, calls["Put with it"] = one.Put(ctx, kv.PutRequest{Key: []byte("k"), Value: []byte("v"), Lease: id}, nil)
		_, calls["Txn putting with it"] = one.Txn(ctx, kv.TxnRequest{Success: []kv.Op{
			{Put: &kv.PutRequest{Key: []byte("k"), Value: []byte("v")}},
			{Put: &kv.PutRequest{Key: []byte("k2"), Value: []byte("v"), Lease: id}},
		}}, nil)
		for name, err := range calls {
			if !errors.Is(err, kv.ErrLeaseNotFound) {
				t.Errorf("/one/: %s of lease %d = %v, want ErrLeaseNotFound", name, id, err)
			}
		}
	}
	for _, id := range []int64{7, 4242, big} {
		if !leaseAlive(t, cli, id) {
			t.Errorf("lease %d is gone after /one/'s calls", id)
		}
	}
	if res, err := one.Range(ctx, kv.RangeRequest{Key: []byte{0}, End: []byte{0}}); err != nil || len(res.KVs) != 0 {
		t.Errorf("/one/ holds %+v, %v after its refused writes; want nothing", res.KVs, err)
	}
	if res, err := two.Range(ctx, kv.RangeRequest{Key: []byte("held")}); err != nil || len(res.KVs) != 1 || res.KVs[0].Lease != 7 {
		t.Errorf("/two/'s key held: %+v, %v; want it on lease 7", res.KVs, err)
	}

	// /two/'s own calls work.
	st, err := two.TimeToLive(ctx, 7, true)
	if err != nil || st.GrantedTTL != 600 || fmt.Sprintf("%q", st.Keys) != `["held"]` {
		t.Errorf("/two/: TimeToLive(7, keys) = %+v, %v; want 600 s with [held]", st, err)
	}
	if ttl, err := two.KeepAlive(ctx, 7); err != nil || ttl != 600 {
		t.Errorf("/two/: KeepAlive(7) = %d, %v", ttl, err)
	}
	for _, g := range []struct {
		b            *Backend
		leases, keys int
	}{{one, 1, 0}, {two, 1, 1}} {
		if st, err := g.b.Status(ctx); err != nil || st.Leases != g.leases || st.Keys != int64(g.keys) {
			t.Errorf("%s: Status = %+v, %v; want %d lease, %d keys", g.b.opts.Namespace, st, err, g.leases, g.keys)
		}
	}
}

// TestRevokeRefusesForeignKeys: a lease of the namespace that holds a key
// outside it (attached by a client of etcd's own) is not revoked through
// the API, and its keys in the namespace alone are reported.
func TestRevokeRefusesForeignKeys(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	b := openGateway(t, c, "/one/")
	cli := c.Client(t)
	ctx := context.Background()
	l, err := b.Grant(ctx, 0, 600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Put(ctx, kv.PutRequest{Key: []byte("mine"), Lease: l.ID}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Put(ctx, "/two/kv/theirs", "v", clientv3.WithLease(clientv3.LeaseID(l.ID))); err != nil {
		t.Fatal(err)
	}
	st, err := b.TimeToLive(ctx, l.ID, true)
	if err != nil || fmt.Sprintf("%q", st.Keys) != `["mine"]` {
		t.Errorf("TimeToLive(keys) = %+v, %v; want [mine] alone", st, err)
	}
	if _, err := b.Revoke(ctx, l.ID, nil); !errors.Is(err, auth.ErrPermissionDenied) {
		t.Errorf("Revoke of a lease holding /two/kv/theirs = %v, want ErrPermissionDenied", err)
	}
	if resp, err := cli.Get(ctx, "/two/kv/theirs"); err != nil || resp.Count != 1 || !leaseAlive(t, cli, l.ID) {
		t.Errorf("after the refused revoke: /two/kv/theirs %v, %v; lease alive %v", resp, err, leaseAlive(t, cli, l.ID))
	}
}

// TestLeaseRecordCheckedInTheWrite: a put or a txn with a lease checks
// the lease's record inside the write itself: a lease whose record is
// gone (as when its ID is granted again through another namespace) takes
// no key.
func TestLeaseRecordCheckedInTheWrite(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	b := openGateway(t, c, "/one/")
	cli := c.Client(t)
	ctx := context.Background()
	l, err := b.Grant(ctx, 99, 600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Put(ctx, kv.PutRequest{Key: []byte("a"), Lease: 99}, nil); err != nil {
		t.Fatalf("Put with lease %d = %v", l.ID, err)
	}
	res, err := b.Txn(ctx, kv.TxnRequest{
		Compare: []kv.Compare{{Key: []byte("a"), Target: kv.CompareLease, Result: kv.CompareEqual, Number: 99}},
		Success: []kv.Op{{Put: &kv.PutRequest{Key: []byte("b"), Lease: 99}}, {Range: &kv.RangeOp{Key: []byte("a")}}},
	}, nil)
	if err != nil || !res.Succeeded || res.Responses[0].Put.Revision != res.Revision || string(res.Responses[1].Range.KVs[0].Key) != "a" {
		t.Fatalf("Txn with lease 99 = %+v, %v", res, err)
	}
	del, err := cli.Delete(ctx, b.leaseRecord(99))
	if err != nil || del.Deleted != 1 {
		t.Fatalf("delete the record: %v, %v", del, err)
	}
	rev := del.Header.Revision
	if _, err := b.Put(ctx, kv.PutRequest{Key: []byte("c"), Lease: 99}, nil); !errors.Is(err, kv.ErrLeaseNotFound) {
		t.Errorf("Put with a lease without its record = %v, want ErrLeaseNotFound", err)
	}
	for _, needsDryRun := range []bool{false, true} {
		txn := kv.TxnRequest{Success: []kv.Op{{Put: &kv.PutRequest{Key: []byte("c"), Lease: 99}}}}
		if needsDryRun {
			txn.Success = append(txn.Success, kv.Op{Range: &kv.RangeOp{Key: []byte("a"), End: []byte("z")}})
		}
		if _, err := b.Txn(ctx, txn, nil); !errors.Is(err, kv.ErrLeaseNotFound) {
			t.Errorf("Txn (dry run %v) with a lease without its record = %v, want ErrLeaseNotFound", needsDryRun, err)
		}
	}
	if got, err := b.Range(ctx, kv.RangeRequest{Key: []byte("c")}); err != nil || len(got.KVs) != 0 || b.Rev() != rev {
		t.Errorf("after the refused writes: c = %+v, %v; revision %d, want %d", got.KVs, err, b.Rev(), rev)
	}
}

// TestMaxLeases: past MaxLeases a grant fails with kv.ErrTooManyLeases;
// once a lease goes, grants pass again (after the next count, within
// leaseCountMaxAge). Another namespace's leases do not count.
func TestMaxLeases(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	b := openGateway(t, c, "/one/", func(o *Options) { o.MaxLeases = 3 })
	other := openGateway(t, c, "/two/")
	ctx := context.Background()
	for range 5 {
		if _, err := other.Grant(ctx, 0, 600); err != nil {
			t.Fatal(err)
		}
	}
	var ids []int64
	for range 3 {
		l, err := b.Grant(ctx, 0, 600)
		if err != nil {
			t.Fatalf("Grant under the bound = %v", err)
		}
		ids = append(ids, l.ID)
	}
	if _, err := b.Grant(ctx, 0, 600); !errors.Is(err, kv.ErrTooManyLeases) {
		t.Fatalf("the 4th Grant with MaxLeases 3 = %v, want ErrTooManyLeases", err)
	}
	if got := allLeases(t, b, 1000); len(got) != 3 {
		t.Fatalf("leases after the refused grant: %v, want 3", got)
	}
	if _, err := b.Revoke(ctx, ids[0], nil); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(recvTimeout)
	for {
		_, err := b.Grant(ctx, 0, 600)
		if err == nil {
			break
		}
		if !errors.Is(err, kv.ErrTooManyLeases) || time.Now().After(deadline) {
			t.Fatalf("Grant after a revoke under MaxLeases = %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := allLeases(t, b, 2); len(got) != 3 {
		t.Errorf("leases = %v, want 3", got)
	}
}
