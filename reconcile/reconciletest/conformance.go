// Package reconciletest holds the behaviour every backend's Rewrite must
// have (an import, a restore), as a test each backend runs against a real
// store of its own: the embedded store on a bbolt file, a gateway on an
// etcd cluster. It holds no fake.
package reconciletest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

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

func importIntoEmpty(t *testing.T, b Backend) {
	_, before := state(t, b, all)
	w := watch(t, b, before+1)
	res := rewrite(t, b, kv.RewriteRequest{Key: all.Key, End: all.End, Entries: Entries(t, "t/b=2", "t/a=1", "t/c=3")})
	check(t, "summary", summary(res), "created 3 [t/a t/b t/c] updated 0 [] deleted 0 [] unchanged 0")
	if res.Revision != before+1 {
		t.Errorf("the import is at revision %d, want %d: one revision", res.Revision, before+1)
	}
	got, _ := state(t, b, all)
	check(t, "state", got, "t/a=1 t/b=2 t/c=3")
	check(t, "watch", w.next(t), fmt.Sprintf("@%d put t/a=1 put t/b=2 put t/c=3", res.Revision))
}

func importMerge(t *testing.T, b Backend) {
	l, err := b.Grant(ctx, 0, 600)
	if err != nil {
		t.Fatal(err)
	}
	put(t, b, "t/same", "1", l.ID)
	put(t, b, "t/other", "1", l.ID)
	put(t, b, "t/keep", "1", 0)
	put(t, b, "u/out", "1", 0)
	res := rewrite(t, b, kv.RewriteRequest{Key: all.Key, End: all.End, Entries: Entries(t, "t/same=1", "t/other=2", "t/new=3")})
	check(t, "summary", summary(res), "created 1 [t/new] updated 1 [t/other] deleted 0 [] unchanged 1")
	got, _ := state(t, b, all)
	// A key that already holds its value keeps its lease; one put has none.
	check(t, "state", got, "t/keep=1 t/new=3 t/other=2 t/same=1@lease")
	out, _ := state(t, b, keyrange.Single([]byte("u/out")))
	check(t, "outside the scope", out, "u/out=1")
}

func importReplace(t *testing.T, b Backend) {
	put(t, b, "t/a", "1", 0)
	put(t, b, "t/b", "1", 0)
	put(t, b, "t/c", "1", 0)
	put(t, b, "u/x", "1", 0)
	_, before := state(t, b, all)
	w := watch(t, b, before+1)
	res := rewrite(t, b, kv.RewriteRequest{Key: all.Key, End: all.End, Replace: true, Entries: Entries(t, "t/b=2")})
	check(t, "summary", summary(res), "created 0 [] updated 1 [t/b] deleted 2 [t/a t/c] unchanged 0")
	got, _ := state(t, b, keyrange.All())
	check(t, "state", got, "t/b=2 u/x=1")
	check(t, "watch", w.next(t), fmt.Sprintf("@%d delete t/a put t/b=2 delete t/c", res.Revision))
	// Replacing with nothing empties the scope.
	res = rewrite(t, b, kv.RewriteRequest{Key: all.Key, End: all.End, Replace: true, Entries: Entries(t)})
	check(t, "summary", summary(res), "created 0 [] updated 0 [] deleted 1 [t/b] unchanged 0")
}

func importNothingDiffers(t *testing.T, b Backend) {
	put(t, b, "t/a", "1", 0)
	rev := put(t, b, "t/b", "2", 0)
	res := rewrite(t, b, kv.RewriteRequest{Key: all.Key, End: all.End, Replace: true, Entries: Entries(t, "t/a=1", "t/b=2")})
	check(t, "summary", summary(res), "created 0 [] updated 0 [] deleted 0 [] unchanged 2")
	if _, now := state(t, b, all); res.Revision != rev || now != rev {
		t.Errorf("an import that changes nothing answered revision %d, the store is at %d; want both at %d", res.Revision, now, rev)
	}
}

func importDryRun(t *testing.T, b Backend) {
	put(t, b, "t/a", "1", 0)
	rev := put(t, b, "t/b", "1", 0)
	res := rewrite(t, b, kv.RewriteRequest{Key: all.Key, End: all.End, Replace: true, DryRun: true, Entries: Entries(t, "t/b=2", "t/c=3")})
	check(t, "summary", summary(res), "created 1 [t/c] updated 1 [t/b] deleted 1 [t/a] unchanged 0")
	got, now := state(t, b, all)
	check(t, "state", got, "t/a=1 t/b=1")
	if res.Revision != rev || now != rev {
		t.Errorf("a dry run answered revision %d and left the store at %d, want both at %d", res.Revision, now, rev)
	}
}

func importIfMatch(t *testing.T, b Backend) {
	scope := keyrange.Prefix([]byte("t/s/"))
	put(t, b, "t/s/a", "1", 0)
	put(t, b, "t/s/gone", "1", 0)
	r := put(t, b, "t/s/b", "1", 0)
	put(t, b, "t/other", "1", 0) // outside the scope: not a change of it
	req := func(since int64) kv.RewriteRequest {
		return kv.RewriteRequest{Key: scope.Key, End: scope.End, UnchangedSince: since, Entries: Entries(t, "t/s/a=2")}
	}
	res := rewrite(t, b, req(r))
	check(t, "summary", summary(res), "created 0 [] updated 1 [t/s/a] deleted 0 [] unchanged 0")

	// A put in the scope after the revision, then a delete.
	after := res.Revision
	for _, change := range []func() int64{
		func() int64 { return put(t, b, "t/s/c", "1", 0) },
		func() int64 { return del(t, b, "t/s/gone") },
	} {
		before, _ := state(t, b, scope)
		now := change()
		changed, _ := state(t, b, scope)
		_, err := b.Rewrite(ctx, req(after))
		if !errors.Is(err, kv.ErrScopeChanged) {
			t.Errorf("Rewrite with If-Match %d after a change at %d = %v, want ErrScopeChanged", after, now, err)
		}
		if got, _ := state(t, b, scope); got != changed {
			t.Errorf("a refused import changed the scope: %s, want %s (before the change: %s)", got, changed, before)
		}
		after = now
	}
	_, cur := state(t, b, all)
	if _, err := b.Rewrite(ctx, req(cur+10)); !errors.Is(err, kv.ErrFutureRevision) {
		t.Errorf("Rewrite with If-Match above the current revision = %v, want ErrFutureRevision", err)
	}
	if err := b.Compact(ctx, cur, true); err != nil {
		t.Fatal(err)
	}
	var ce *kv.CompactedError
	if _, err := b.Rewrite(ctx, req(cur-1)); !errors.As(err, &ce) {
		t.Errorf("Rewrite with If-Match below the compact revision = %v, want compacted", err)
	}
	res = rewrite(t, b, req(cur))
	check(t, "at the compact revision", summary(res), "created 0 [] updated 0 [] deleted 0 [] unchanged 1")
}

func importListsAtMost(t *testing.T, b Backend) {
	n := kv.MaxListedKeys + 3
	pairs := make([]string, n)
	for i := range pairs {
		pairs[i] = fmt.Sprintf("t/%05d=v", i)
	}
	res := rewrite(t, b, kv.RewriteRequest{Key: all.Key, End: all.End, Entries: Entries(t, pairs...)})
	if res.Created != int64(n) || len(res.CreatedKeys) != kv.MaxListedKeys || string(res.CreatedKeys[0]) != "t/00000" {
		t.Errorf("an import of %d keys: created %d, %d listed from %q; want %d, %d listed from t/00000",
			n, res.Created, len(res.CreatedKeys), res.CreatedKeys[0], n, kv.MaxListedKeys)
	}
}

// restore is the scenario: a prefix of keys deleted, half of
// another changed, then both restored to the revision before, at one
// revision that watchers see as one message.
func restore(t *testing.T, b Backend) {
	const n = 200
	for i := range n {
		put(t, b, fmt.Sprintf("t/del/%03d", i), fmt.Sprint("d", i), 0)
		put(t, b, fmt.Sprintf("t/chg/%03d", i), fmt.Sprint("c", i), 0)
	}
	then, r := state(t, b, all)
	if _, err := b.Delete(ctx, kv.DeleteRequest{Key: []byte("t/del/"), End: keyrange.PrefixEnd([]byte("t/del/"))}); err != nil {
		t.Fatal(err)
	}
	l, err := b.Grant(ctx, 0, 600)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i += 2 {
		put(t, b, fmt.Sprintf("t/chg/%03d", i), "changed", l.ID)
	}
	put(t, b, "t/chg/new", "created after", 0)
	_, before := state(t, b, all)
	w := watch(t, b, before+1)

	res := rewrite(t, b, kv.RewriteRequest{Key: all.Key, End: all.End, Revision: r})
	if res.Created != n || res.Updated != n/2 || res.Deleted != 1 || res.Unchanged != n/2 {
		t.Errorf("restore: %s; want %d created, %d updated, 1 deleted, %d unchanged", summary(res), n, n/2, n/2)
	}
	if res.Revision != before+1 {
		t.Errorf("the restore is at revision %d, want %d: one revision", res.Revision, before+1)
	}
	now, _ := state(t, b, all)
	check(t, "the range after the restore", now, then)
	msg := w.next(t)
	if !strings.HasPrefix(msg, fmt.Sprintf("@%d ", res.Revision)) || strings.Count(msg, " put ")+strings.Count(msg, " delete ") != n+n/2+1 {
		t.Errorf("the watcher got %.200s..., want every change of the restore in one message at %d", msg, res.Revision)
	}
}

func restoreDryRunAndBounds(t *testing.T, b Backend) {
	r := put(t, b, "t/a", "1", 0)
	put(t, b, "t/a", "2", 0)
	cur := put(t, b, "t/b", "1", 0)
	res := rewrite(t, b, kv.RewriteRequest{Key: all.Key, End: all.End, Revision: r, DryRun: true})
	check(t, "dry run", summary(res), "created 0 [] updated 1 [t/a] deleted 1 [t/b] unchanged 0")
	if got, now := state(t, b, all); got != "t/a=2 t/b=1" || now != cur {
		t.Errorf("a dry run changed the store: %s at %d", got, now)
	}
	if _, err := b.Rewrite(ctx, kv.RewriteRequest{Key: all.Key, End: all.End, Revision: cur + 5}); !errors.Is(err, kv.ErrFutureRevision) {
		t.Errorf("a restore to a revision above the current one = %v, want ErrFutureRevision", err)
	}
	if err := b.Compact(ctx, cur, true); err != nil {
		t.Fatal(err)
	}
	var ce *kv.CompactedError
	if _, err := b.Rewrite(ctx, kv.RewriteRequest{Key: all.Key, End: all.End, Revision: r}); !errors.As(err, &ce) {
		t.Errorf("a restore below the compact revision = %v, want compacted", err)
	}
	if got, _ := state(t, b, all); got != "t/a=2 t/b=1" {
		t.Errorf("a refused restore changed the store: %s", got)
	}
}

// each reads a range of more keys than a page, at a past revision.
func each(t *testing.T, b Backend) {
	const n = 2500
	pairs := make([]string, n)
	for i := range pairs {
		pairs[i] = fmt.Sprintf("t/%05d=%d", i, i)
	}
	res := rewrite(t, b, kv.RewriteRequest{Key: all.Key, End: all.End, Entries: Entries(t, pairs...)})
	put(t, b, "t/00007", "later", 0)
	del(t, b, "t/00009")
	var got []string
	rev, err := b.Each(ctx, all.Key, all.End, res.Revision, func(e *kv.KeyValue) error {
		got = append(got, string(e.Key)+"="+string(e.Value))
		return nil
	})
	if err != nil || rev != res.Revision || strings.Join(got, " ") != strings.Join(pairs, " ") {
		t.Fatalf("Each at %d = %d keys at %d, %v; want the %d keys of the import", res.Revision, len(got), rev, err, n)
	}
	got = got[:0]
	rev, err = b.Each(ctx, []byte("t/00009"), nil, 0, func(e *kv.KeyValue) error {
		got = append(got, string(e.Key))
		return nil
	})
	if _, now := state(t, b, all); err != nil || len(got) != 0 || rev != now {
		t.Fatalf("Each of a deleted key = %q at %d, %v", got, rev, err)
	}
}

// watcher reads the events of every key under t/.
type watcher struct{ st kv.WatchStream }

func watch(t *testing.T, b Backend, from int64) *watcher {
	t.Helper()
	st, err := b.Watch(ctx, kv.WatchRequest{Key: all.Key, End: all.End, StartRevision: from})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return &watcher{st: st}
}

// next returns the next response with events, as "@rev put k=v delete
// k...": one response is one message of a watch stream.
func (w *watcher) next(t *testing.T) string {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		rs := w.st.Next()
		for _, r := range rs {
			if r.Canceled || r.CompactRevision != 0 {
				t.Fatalf("the watch ended: %+v", r)
			}
			if len(r.Events) == 0 {
				continue
			}
			out := []string{fmt.Sprint("@", r.Revision)}
			revs := map[int64]bool{}
			for _, ev := range r.Events {
				revs[ev.KV.ModRevision] = true
				if ev.Type == kv.EventDelete {
					out = append(out, "delete "+string(ev.KV.Key))
				} else {
					out = append(out, "put "+string(ev.KV.Key)+"="+string(ev.KV.Value))
				}
			}
			if len(revs) != 1 {
				t.Errorf("one response holds the events of revisions %v", slices.Collect(maps.Keys(revs)))
			}
			w.st.Release()
			return strings.Join(out, " ")
		}
		w.st.Release()
		select {
		case <-w.st.Ready():
		case <-deadline:
			t.Fatal("no events within 30s")
		}
	}
}
