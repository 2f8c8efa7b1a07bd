package embedded

import (
	"context"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/mvcc"
	"github.com/httpkv/httpkv/reconcile"
)

// Rewrite makes a range hold what an import or a restore wants, in one
// write of the store: the diff is worked out inside the write, on the
// state it changes, and applied as it goes, so all its changes are one
// revision however many they are. --max-txn-ops does not bound it (it is
// no txn of the API); the quota does, as for any put. A dry run reads a
// snapshot instead and holds up no writer.
//
// Its memory is that of the changes it writes (the store keeps their
// records, index entries and events until the commit, as for any write),
// not that of the range: the store's side is read a chunk of the index at
// a time.
func (b *Backend) Rewrite(_ context.Context, r kv.RewriteRequest) (kv.RewriteResult, error) {
	if err := r.Validate(); err != nil {
		return kv.RewriteResult{}, err
	}
	if r.DryRun {
		rt, err := b.kv.Read()
		if err != nil {
			return kv.RewriteResult{}, err
		}
		defer rt.End()
		res, err := rewrite(rt, &r, nil)
		res.Revision = rt.Rev()
		return res, err
	}
	return mvcc.Apply(b.kv, func(tx *mvcc.WriteTxn) (kv.RewriteResult, error) {
		res, err := rewrite(tx, &r, tx)
		res.Revision = tx.Rev()
		return res, err
	})
}

// rewriteReader is what a rewrite reads: a read or a write transaction.
type rewriteReader interface {
	Scan(r keyrange.Range, rev int64) (*mvcc.Scan, error)
	ChangedSince(r keyrange.Range, rev int64) (bool, error)
}

// writer is what a rewrite writes with.
type writer interface {
	Put(kv.PutRequest) (kv.PutResult, error)
	DeleteRange(kv.DeleteRequest) (kv.DeleteResult, error)
}

// rewrite diffs the scope of r as s holds it against what r wants, and
// writes each change with w as the diff finds it (nil: a dry run).
func rewrite(s rewriteReader, r *kv.RewriteRequest, w writer) (kv.RewriteResult, error) {
	scope := keyrange.Range{Key: r.Key, End: r.End}
	if r.UnchangedSince != 0 {
		changed, err := s.ChangedSince(scope, r.UnchangedSince)
		if err != nil {
			return kv.RewriteResult{}, err
		}
		if changed {
			return kv.RewriteResult{}, kv.Errorf(kv.ErrScopeChanged, "a key of the range was written or deleted after revision %d (If-Match): read it again", r.UnchangedSince)
		}
	}
	// The store's side is read at the revision before the rewrite's own
	// writes, which it therefore never sees.
	cur, err := s.Scan(scope, 0)
	if err != nil {
		return kv.RewriteResult{}, err
	}
	var want reconcile.Cursor
	if r.IsRestore() {
		past, err := s.Scan(scope, r.Revision)
		if err != nil {
			return kv.RewriteResult{}, err
		}
		want = scanCursor{past}
	} else {
		want = reconcile.EntriesCursor(r.Entries)
	}
	return reconcile.Diff(scanCursor{cur}, want, r.Replace || r.IsRestore(), func(ch *reconcile.Change) error {
		if w == nil {
			return nil
		}
		if ch.Kind == reconcile.Delete {
			_, err := w.DeleteRange(kv.DeleteRequest{Key: ch.Cur.Key})
			return err
		}
		_, err := w.Put(kv.PutRequest{Key: ch.Want.Key, Value: ch.Want.Value})
		return err
	})
}

// scanCursor is a store's Scan as a side of a diff.
type scanCursor struct{ s *mvcc.Scan }

func (c scanCursor) Next() (reconcile.Item, bool, error) {
	e, ok, err := c.s.Next()
	return reconcile.Item{Key: e.Key, Value: e.Value, Mod: e.ModRevision}, ok, err
}
