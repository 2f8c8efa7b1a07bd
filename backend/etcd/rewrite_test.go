package etcd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/internal/etcdtest"
	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/reconcile/reconciletest"
)

// TestRewriteConformance runs the rewrite's conformance test on
// gateways to one cluster, a namespace each.
func TestRewriteConformance(t *testing.T) {
	c := etcdtest.StartCluster(t, 1, etcdtest.WithFlags("--max-txn-ops=4000"))
	n := 0
	reconciletest.Run(t, func(t *testing.T) reconciletest.Backend {
		n++
		return openGateway(t, c, fmt.Sprintf("/conf%d/", n), func(o *Options) { o.MaxTxnOps, o.ClusterMaintenance = 4000, true })
	})
}

// TestRewriteMaxTxnOps: a rewrite needing more ops, or more compares,
// than --max-txn-ops is refused naming it, and changes nothing; a dry run
// is not bounded.
func TestRewriteMaxTxnOps(t *testing.T) {
	c := etcdtest.StartCluster(t, 1)
	b := openGateway(t, c, "/ops/", func(o *Options) { o.MaxTxnOps = 4 })
	ctx := context.Background()
	for _, k := range []string{"a", "b", "c", "d"} {
		put(t, b, k, "1")
	}
	rev := put(t, b, "e", "1")
	all := keyrange.All()
	for _, tc := range []struct {
		name string
		req  kv.RewriteRequest
	}{
		{"five puts", kv.RewriteRequest{Entries: reconciletest.Entries(t, "a=2", "b=2", "c=2", "d=2", "e=2")}},
		{"four updates and a compare each, plus one", kv.RewriteRequest{Entries: reconciletest.Entries(t, "a=2", "b=2", "c=2", "d=2")}},
		{"If-Match: a compare per key of the range", kv.RewriteRequest{Entries: reconciletest.Entries(t, "a=2"), UnchangedSince: rev}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.req
			r.Key, r.End = all.Key, all.End
			_, err := b.Rewrite(ctx, r)
			if !errors.Is(err, kv.ErrTooManyOps) || !strings.Contains(err.Error(), "--max-txn-ops bounds to 4") {
				t.Fatalf("Rewrite = %v, want ErrTooManyOps naming --max-txn-ops", err)
			}
			if res, _ := b.Range(ctx, kv.RangeRequest{Key: all.Key, End: all.End}); res.Revision != rev {
				t.Fatalf("a refused rewrite moved the store to %d from %d", res.Revision, rev)
			}
			r.DryRun = true
			if _, err := b.Rewrite(ctx, r); err != nil {
				t.Fatalf("the same as a dry run = %v, want its answer", err)
			}
		})
	}
	// Three updates: three ops, four compares.
	res, err := b.Rewrite(ctx, kv.RewriteRequest{Key: all.Key, End: all.End, Entries: reconciletest.Entries(t, "a=2", "b=2", "c=2")})
	if err != nil || res.Updated != 3 {
		t.Fatalf("a rewrite within the bound = %+v, %v", res, err)
	}
}

// TestRewriteTxnNoticesChanges works a rewrite out, changes the store as
// another client would before its txn, and checks that the txn then
// does not apply: a put anywhere in the scope, a delete of a key it
// updates or deletes, and, with If-Match, a delete of any key of the
// scope.
func TestRewriteTxnNoticesChanges(t *testing.T) {
	c := etcdtest.StartCluster(t, 1)
	ctx := context.Background()
	n := 0
	for _, tc := range []struct {
		name    string
		since   bool
		change  func(b *Backend)
		applies bool
	}{
		{name: "nothing", change: func(*Backend) {}, applies: true},
		{name: "a put of a new key", change: func(b *Backend) { put(t, b, "s/new", "1") }},
		{name: "a put of an unchanged key", change: func(b *Backend) { put(t, b, "s/same", "1") }},
		{name: "a delete of an updated key", change: func(b *Backend) { mustDelete(t, b, "s/upd") }},
		{name: "a delete of a deleted key", change: func(b *Backend) { mustDelete(t, b, "s/gone") }},
		{name: "a delete of an unchanged key", change: func(b *Backend) { mustDelete(t, b, "s/same") }, applies: true},
		{name: "a delete of an unchanged key, with If-Match", since: true, change: func(b *Backend) { mustDelete(t, b, "s/same") }},
		{name: "a put outside the scope", change: func(b *Backend) { put(t, b, "t", "1") }, applies: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n++
			b := openGateway(t, c, fmt.Sprintf("/race%d/", n))
			put(t, b, "s/same", "1")
			put(t, b, "s/upd", "1")
			rev := put(t, b, "s/gone", "1")
			scope := keyrange.Prefix([]byte("s/"))
			r := kv.RewriteRequest{Key: scope.Key, End: scope.End, Replace: true, Entries: reconciletest.Entries(t, "s/same=1", "s/upd=2")}
			if tc.since {
				r.UnchangedSince = rev
			}
			_, txn, err := b.planRewrite(ctx, &r)
			if err != nil || txn == nil {
				t.Fatalf("planRewrite = %v, %v", txn, err)
			}
			tc.change(b)
			out, err := b.Txn(ctx, *txn, nil)
			if err != nil {
				t.Fatal(err)
			}
			if out.Succeeded != tc.applies {
				t.Fatalf("the txn applied: %v, want %v", out.Succeeded, tc.applies)
			}
		})
	}
}

func mustDelete(t *testing.T, b *Backend, key string) {
	t.Helper()
	if _, err := b.Delete(context.Background(), kv.DeleteRequest{Key: []byte(key)}); err != nil {
		t.Fatal(err)
	}
}
