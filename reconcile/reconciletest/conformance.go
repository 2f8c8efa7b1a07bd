// Package reconciletest holds the behaviour every backend's Rewrite must
// have (an import, a restore), as a test each backend runs against a real
// store of its own: the embedded store on a bbolt file, a gateway on an
// etcd cluster. It holds no fake.
package reconciletest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/reconcile"
)

// Backend is what the conformance test uses of a backend.
type Backend interface {
	Range(ctx context.Context, r kv.RangeRequest) (kv.RangeResult, error)
	Put(ctx context.Context, r kv.PutRequest, guard kv.LeaseGuard) (kv.PutResult, error)
	Delete(ctx context.Context, r kv.DeleteRequest) (kv.DeleteResult, error)
	Grant(ctx context.Context, id, ttl int64) (kv.Lease, error)
	Compact(ctx context.Context, rev int64, physical bool) error
	Watch(ctx context.Context, r kv.WatchRequest) (kv.WatchStream, error)
	Rewrite(ctx context.Context, r kv.RewriteRequest) (kv.RewriteResult, error)
	Each(ctx context.Context, key, end []byte, rev int64, fn func(*kv.KeyValue) error) (int64, error)
}

// Open opens a new, empty backend for one subtest; it must allow at
// least 2000 ops in a txn where that bounds a rewrite.
type Open func(t *testing.T) Backend

// Run runs every case of the conformance test, each on a backend open
// makes.
func Run(t *testing.T, open Open) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, b Backend)
	}{
		{"ImportIntoEmpty", importIntoEmpty},
		{"ImportMerge", importMerge},
		{"ImportReplace", importReplace},
		{"ImportNothingDiffers", importNothingDiffers},
		{"ImportDryRun", importDryRun},
		{"ImportIfMatch", importIfMatch},
		{"ImportListsAtMost", importListsAtMost},
		{"Restore", restore},
		{"RestoreDryRunAndBounds", restoreDryRunAndBounds},
		{"Each", each},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

var ctx = context.Background()

// Entries builds the entries of "k=v" pairs, numbered as the lines of an
// import from 1, for a backend's own tests of rewrites.
func Entries(t testing.TB, pairs ...string) *reconcile.Entries {
	t.Helper()
	b := &reconcile.Builder{}
	for i, p := range pairs {
		k, v, _ := strings.Cut(p, "=")
		if err := b.Add([]byte(k), []byte(v), i+1); err != nil {
			t.Fatal(err)
		}
	}
	e, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func put(t *testing.T, b Backend, key, value string, lease int64) int64 {
	t.Helper()
	res, err := b.Put(ctx, kv.PutRequest{Key: []byte(key), Value: []byte(value), Lease: lease}, nil)
	if err != nil {
		t.Fatalf("Put(%q) = %v", key, err)
	}
	return res.Revision
}

func del(t *testing.T, b Backend, key string) int64 {
	t.Helper()
	res, err := b.Delete(ctx, kv.DeleteRequest{Key: []byte(key)})
	if err != nil {
		t.Fatalf("Delete(%q) = %v", key, err)
	}
	return res.Revision
}

// state is the range r as "k=v" (with "@lease" when it has one), in key
// order, and the revision read at.
func state(t *testing.T, b Backend, r keyrange.Range) (string, int64) {
	t.Helper()
	res, err := b.Range(ctx, kv.RangeRequest{Key: r.Key, End: r.End})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range res.KVs {
		s := string(e.Key) + "=" + string(e.Value)
		if e.Lease != 0 {
			s += "@lease"
		}
		out = append(out, s)
	}
	return strings.Join(out, " "), res.Revision
}

// all is every key of the tests, which stay under "t/".
var all = keyrange.Prefix([]byte("t/"))

func rewrite(t *testing.T, b Backend, r kv.RewriteRequest) kv.RewriteResult {
	t.Helper()
	res, err := b.Rewrite(ctx, r)
	if err != nil {
		t.Fatalf("Rewrite(%q..%q) = %v", r.Key, r.End, err)
	}
	return res
}

func keys(l [][]byte) string {
	var s []string
	for _, k := range l {
		s = append(s, string(k))
	}
	return strings.Join(s, " ")
}

// summary is a result's counts and lists.
func summary(r kv.RewriteResult) string {
	return fmt.Sprintf("created %d [%s] updated %d [%s] deleted %d [%s] unchanged %d",
		r.Created, keys(r.CreatedKeys), r.Updated, keys(r.UpdatedKeys), r.Deleted, keys(r.DeletedKeys), r.Unchanged)
}

func check(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s:\n got %s\nwant %s", what, got, want)
	}
}
