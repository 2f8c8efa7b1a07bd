package reconciletest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
)

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
