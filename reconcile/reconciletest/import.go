package reconciletest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
)

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
