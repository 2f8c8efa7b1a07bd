package etcd

import (
	"context"
	"errors"
	"fmt"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"

	"github.com/httpkv/httpkv/kv"
)

// A txn that writes must never reach etcd with a range at a revision
// (a past read) that could fail there. etcd checks such a range (compacted,
// or a future revision) only on the member the client is connected to:
// the others drop a txn's ranges before they apply it, since a range
// changes nothing (etcd-io/etcd#18667, in every release up to 3.6.x). A
// range that fails there fails the txn on that member alone, and the
// members diverge: the others applied its writes. Through a gateway over
// three members, a txn whose success branch read a future revision and
// deleted a key answered "future revision", while two members of three
// had deleted the key.
//
// So a writing txn with past reads runs as a dry run first (dryRun: every
// range as it is, every write a count of its key; read-only, so no member
// applies it), which fails as etcd would if a past read on its path is
// compacted or in the future. If it passes, the txn is sent with each past
// read replaced by a count of its keys at the current revision, which
// cannot fail, and guarded (guards) so that it takes the path the dry run
// took; the past reads' answers are then the dry run's (a past revision's
// keys never change). A compaction between the two cannot make the txn
// fail on one member only: it no longer reads the past.

// maxGuardedAttempts bounds the attempts of a txn with past reads, whose
// guards must hold: the keys it reads changing between its dry run and
// itself this many times in a row answer 503, to retry.
const maxGuardedAttempts = 16

// hasPastReads reports whether a range of r, in any branch and nested
// txn, reads at a given revision.
func hasPastReads(r *kv.TxnRequest) bool {
	for _, branch := range [][]kv.Op{r.Success, r.Failure} {
		for _, op := range branch {
			if op.Range != nil && op.Range.Options.Revision != 0 || op.Txn != nil && hasPastReads(op.Txn) {
				return true
			}
		}
	}
	return false
}

// mapOps returns r with each op of each branch, nested txns' included,
// replaced by f's: the shape, and so the position of every answer, stays.
func mapOps(r *kv.TxnRequest, f func(kv.Op) kv.Op) *kv.TxnRequest {
	branch := func(ops []kv.Op) []kv.Op {
		out := make([]kv.Op, len(ops))
		for i, op := range ops {
			if op.Txn != nil {
				out[i] = kv.Op{Txn: mapOps(op.Txn, f)}
			} else {
				out[i] = f(op)
			}
		}
		return out
	}
	return &kv.TxnRequest{Compare: r.Compare, Success: branch(r.Success), Failure: branch(r.Failure)}
}

// countOf is a read of how many keys op names at the current revision: a
// range or a delete's keys, a put's key. It cannot fail.
func countOf(op kv.Op) kv.Op {
	c := &kv.RangeOp{Options: kv.RangeOptions{CountOnly: true}}
	switch {
	case op.Range != nil:
		c.Key, c.End = op.Range.Key, op.Range.End
	case op.Put != nil:
		c.Key = op.Put.Key
	case op.Delete != nil:
		// Its first key only: counting a large range costs etcd, and the
		// count is not used.
		c.Key = op.Delete.Key
	}
	return kv.Op{Range: c}
}

// dryRun returns r without its writes, each a count of its key instead,
// and each range bounded by a copy of its limits (Charge counts what it
// was charged: the real txn is charged afresh). It is read-only and has
// r's shape: its answer follows the path r would take, op for op.
func dryRun(r *kv.TxnRequest, limits map[*kv.ReadLimits]*kv.ReadLimits) *kv.TxnRequest {
	return mapOps(r, func(op kv.Op) kv.Op {
		if op.Range == nil {
			return countOf(op)
		}
		rg := *op.Range
		if l := rg.Options.Limits; l != nil {
			if limits[l] == nil {
				limits[l] = &kv.ReadLimits{MaxKeys: l.MaxKeys, MaxBytes: l.MaxBytes}
			}
			rg.Options.Limits = limits[l]
		}
		return kv.Op{Range: &rg}
	})
}

// withoutPastReads returns r with each past read a count of its keys at
// the current revision.
func withoutPastReads(r *kv.TxnRequest) *kv.TxnRequest {
	return mapOps(r, func(op kv.Op) kv.Op {
		if op.Range != nil && op.Range.Options.Revision != 0 {
			return countOf(op)
		}
		return op
	})
}

// fillPastReads puts into res, the answer of withoutPastReads(r), the
// answers of r's past reads from dry, the answer of dryRun(r) along the
// same path, each charged to r's limits. Each keeps the header res has
// for it: the revision current when that op ran.
func fillPastReads(r *kv.TxnRequest, res, dry *kv.TxnResult) error {
	if res.Succeeded != dry.Succeeded || len(res.Responses) != len(dry.Responses) {
		return fmt.Errorf("etcd: a guarded txn took another path than its dry run (succeeded %v, dry run %v)", res.Succeeded, dry.Succeeded)
	}
	branch := r.Success
	if !res.Succeeded {
		branch = r.Failure
	}
	for i, op := range branch {
		got, was := &res.Responses[i], &dry.Responses[i]
		switch {
		case op.Range != nil && op.Range.Options.Revision != 0:
			for _, k := range was.Range.KVs {
				if err := op.Range.Options.Limits.Charge(len(k.Key) + len(k.Value)); err != nil {
					return err
				}
			}
			got.Range.KVs, got.Range.Count, got.Range.More = was.Range.KVs, was.Range.Count, was.Range.More
		case op.Txn != nil:
			if err := fillPastReads(op.Txn, got.Txn, was.Txn); err != nil {
				return err
			}
		}
	}
	return nil
}

// isRangeCheck reports whether err is how etcd refuses a range at a
// revision: compacted, or in the future.
func isRangeCheck(err error) bool {
	return errors.Is(err, kv.ErrCompacted) || errors.Is(err, kv.ErrFutureRevision)
}

// firstFailure returns what etcd answers r with, given that its dry run
// failed with rangeErr: etcd checks the ops of the path in order, so a
// put with ignore_value or ignore_lease of a key that does not exist
// before the failing range fails the txn first. It reads the path and
// the keys again (every op a count, which cannot fail), and returns the
// first op of the path that fails then, or rangeErr if none does (the
// keys changed in between: the txn failed at the dry run's revision).
// A put naming a lease that does not exist is not told apart: its
// lease_not_found then loses to rangeErr.
func (b *Backend) firstFailure(ctx context.Context, r *kv.TxnRequest, rangeErr error) error {
	var probe *pb.TxnResponse
	err := b.call(ctx, func(ctx context.Context) error {
		resp, err := b.reads.Do(ctx, txnOp(mapOps(r, countOf)))
		if err != nil {
			return err
		}
		probe = (*pb.TxnResponse)(resp.Txn())
		return nil
	})
	if err != nil {
		return err
	}
	var compacted *kv.CompactedError
	errors.As(rangeErr, &compacted)
	var walk func(r *kv.TxnRequest, resp *pb.TxnResponse) error
	walk = func(r *kv.TxnRequest, resp *pb.TxnResponse) error {
		branch := r.Success
		if !resp.Succeeded {
			branch = r.Failure
		}
		for i, op := range branch {
			out := resp.Responses[i]
			switch {
			case op.Put != nil && (op.Put.IgnoreValue || op.Put.IgnoreLease):
				if out.GetResponseRange().Count == 0 {
					return mapErr(rpctypes.ErrGRPCKeyNotFound)
				}
			case op.Range != nil && op.Range.Options.Revision > probe.Header.Revision:
				return mapErr(rpctypes.ErrGRPCFutureRev)
			case op.Range != nil && compacted != nil && op.Range.Options.Revision != 0 &&
				op.Range.Options.Revision < compacted.CompactRevision:
				return rangeErr
			case op.Txn != nil:
				if err := walk(op.Txn, out.GetResponseTxn()); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(r, probe); err != nil {
		return err
	}
	return rangeErr
}

// errKeptChanging answers a txn with past reads whose guards failed
// maxGuardedAttempts times.
var errKeptChanging = kv.Errorf(kv.ErrUnavailable,
	"the keys the txn compares and reads kept changing while it ran (it reads at a past revision, so it runs only when they hold still): retry")
