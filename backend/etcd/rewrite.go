package etcd

import (
	"context"
	"errors"
	"strings"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/reconcile"
)

// rewriteAttempts bounds how many times a rewrite reads its scope again
// because a key of it changed between the read and the txn.
const rewriteAttempts = 4

// Rewrite makes a range hold what an import or a restore wants, as one
// etcd txn. It reads the scope page by page at one revision R0 (and, for
// a restore, the scope at the revision it brings back), works out the
// changes as the embedded store does (package reconcile), and sends them
// with compares that make the txn apply only to the state it was worked
// out from:
//
//   - every key of the scope has a mod revision <= R0: nothing was put or
//     created in the scope since;
//   - each key it updates or deletes still has the mod revision it had at
//     R0: none of them was deleted since;
//   - with If-Match (UnchangedSince), every key of the scope at R0 still
//     has its mod revision, so that no delete anywhere in the scope goes
//     unnoticed.
//
// When a compare fails, it starts over, rewriteAttempts times at most.
// Without If-Match, a key the rewrite leaves unchanged may be deleted
// between R0 and the txn: the outcome is then the rewrite followed by
// that delete, as if the delete came after it.
//
// etcd bounds a txn's compares and ops by its --max-txn-ops, which the
// gateway's MaxTxnOps mirrors: a rewrite that needs more is refused with
// ErrTooManyOps before it sends anything. A dry run is not bounded.
func (b *Backend) Rewrite(ctx context.Context, r kv.RewriteRequest) (kv.RewriteResult, error) {
	if err := r.Validate(); err != nil {
		return kv.RewriteResult{}, err
	}
	for range rewriteAttempts {
		res, txn, err := b.planRewrite(ctx, &r)
		if err != nil || txn == nil {
			return res, err
		}
		out, err := b.Txn(ctx, *txn, nil)
		if err != nil {
			if isRequestTooLarge(err) {
				return kv.RewriteResult{}, kv.Invalidf("the txn of %d writes is larger than etcd's --max-request-bytes: write less at once", res.Changes())
			}
			return kv.RewriteResult{}, err
		}
		if out.Succeeded {
			res.Revision = out.Revision
			return res, nil
		}
		if r.UnchangedSince != 0 {
			return kv.RewriteResult{}, scopeChanged(r.UnchangedSince)
		}
	}
	return kv.RewriteResult{}, kv.Errorf(kv.ErrUnavailable, "the range changed while the changes were worked out, %d times in a row: retry later", rewriteAttempts)
}

// planRewrite reads the scope and works out the changes of r: the txn
// that makes them, or nil when there is nothing to send (a dry run, or
// nothing differs). Its result's Revision is the revision it read at.
func (b *Backend) planRewrite(ctx context.Context, r *kv.RewriteRequest) (kv.RewriteResult, *kv.TxnRequest, error) {
	scope := keyrange.Range{Key: r.Key, End: r.End}
	cur := reconcile.NewRangeCursor(ctx, b, scope, 0)
	if err := cur.Start(); err != nil {
		return kv.RewriteResult{}, nil, err
	}
	r0 := cur.Revision()
	var want reconcile.Cursor
	if r.IsRestore() {
		if r.Revision > r0 {
			return kv.RewriteResult{}, nil, kv.FutureRevision("revision", r.Revision, r0)
		}
		want = reconcile.NewRangeCursor(ctx, b, scope, r.Revision)
	} else {
		want = reconcile.EntriesCursor(r.Entries)
	}
	p := rewritePlan{max: b.opts.MaxTxnOps, dryRun: r.DryRun, since: r.UnchangedSince}
	if p.since != 0 {
		if err := b.checkUnchanged(ctx, scope, p.since, cur); err != nil {
			return kv.RewriteResult{}, nil, err
		}
	}
	res, err := reconcile.Diff(p.watch(cur), want, r.Replace || r.IsRestore(), p.add)
	res.Revision = r0
	if err != nil {
		return kv.RewriteResult{}, nil, err
	}
	if r.DryRun || res.Changes() == 0 {
		return res, nil, nil
	}
	if res.Changes() > int64(p.max) || p.needed+1 > p.max {
		what := "import"
		if r.IsRestore() {
			what = "restore"
		}
		return kv.RewriteResult{}, nil, kv.Errorf(kv.ErrTooManyOps,
			"the %s writes %d keys and compares %d; over etcd it is one txn, which --max-txn-ops bounds to %d of each: %s, or raise --max-txn-ops on etcd and on the gateways",
			what, res.Changes(), p.needed+1, p.max, lessHint(r))
	}
	txn := &kv.TxnRequest{
		Compare: append([]kv.Compare{{Key: scope.Key, End: scope.End, Target: kv.CompareMod, Result: kv.CompareLess, Number: r0 + 1}}, p.compares...),
		Success: p.ops,
	}
	return res, txn, nil
}

func lessHint(r *kv.RewriteRequest) string {
	if r.IsRestore() {
		return "restore a narrower range at a time"
	}
	return "import fewer keys at a time"
}

// rewritePlan collects the compares and ops of a rewrite's txn as the
// diff finds the changes, up to max of each; past it, the diff goes on
// counting and the rewrite is refused.
type rewritePlan struct {
	max      int
	dryRun   bool
	since    int64
	compares []kv.Compare
	ops      []kv.Op
	// needed counts the compares of keys the txn needs, past max too.
	needed int
}

// add takes one change of the diff.
func (p *rewritePlan) add(ch *reconcile.Change) error {
	if p.dryRun || len(p.ops) >= p.max {
		return nil
	}
	switch ch.Kind {
	case reconcile.Delete:
		p.ops = append(p.ops, kv.Op{Delete: &kv.DeleteRequest{Key: clone(ch.Cur.Key)}})
	default:
		p.ops = append(p.ops, kv.Op{Put: &kv.PutRequest{Key: clone(ch.Want.Key), Value: clone(ch.Want.Value)}})
	}
	if ch.Kind != reconcile.Create && p.since == 0 {
		p.compare(ch.Cur)
	}
	return nil
}

// compare adds a compare that the key still has the mod revision it was
// read with.
func (p *rewritePlan) compare(it reconcile.Item) {
	p.needed++
	if len(p.compares) < p.max {
		p.compares = append(p.compares, kv.Compare{Key: clone(it.Key), Target: kv.CompareMod, Result: kv.CompareEqual, Number: it.Mod})
	}
}

// watch returns the store's side of the diff. With If-Match, each of its
// keys must not have changed since, and gets a compare (unless a dry
// run, which sends none).
func (p *rewritePlan) watch(cur reconcile.Cursor) reconcile.Cursor {
	if p.since == 0 {
		return cur
	}
	return compareEach{cur, p}
}

type compareEach struct {
	reconcile.Cursor
	p *rewritePlan
}

func (c compareEach) Next() (reconcile.Item, bool, error) {
	it, ok, err := c.Cursor.Next()
	if ok && it.Mod > c.p.since {
		return it, false, scopeChanged(c.p.since)
	}
	if ok && !c.p.dryRun {
		c.p.compare(it)
	}
	return it, ok, err
}

// checkUnchanged fails with ErrScopeChanged if the scope does not hold as
// many keys at the revision cur reads at as at since. With the check of
// each key's mod revision as the diff reads it (compareEach), that tells
// every change after since: with nothing put since, a key fewer is a key
// deleted.
func (b *Backend) checkUnchanged(ctx context.Context, scope keyrange.Range, since int64, cur *reconcile.RangeCursor) error {
	if since > cur.Revision() {
		return kv.FutureRevision("revision of If-Match", since, cur.Revision())
	}
	then, err := b.Range(ctx, kv.RangeRequest{Key: scope.Key, End: scope.End, Options: kv.RangeOptions{Revision: since, CountOnly: true}})
	if err != nil {
		return err
	}
	if then.Count != cur.Count() {
		return scopeChanged(since)
	}
	return nil
}

func scopeChanged(since int64) error {
	return kv.Errorf(kv.ErrScopeChanged, "a key of the range was written or deleted after revision %d (If-Match): read it again", since)
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }

// isRequestTooLarge reports etcd's refusal of a request over its
// --max-request-bytes, as the gateway maps it.
func isRequestTooLarge(err error) bool {
	return errors.Is(err, kv.ErrInvalidArgument) && strings.Contains(err.Error(), "request is too large")
}
