package etcd

import (
	"context"
	"strings"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/httpkv/httpkv/kv"
)

// An answer of etcd larger than the API's bound (Options.MaxResponseBytes)
// is refused by the gateway's client as it arrives, before it is read
// into memory (the read client's gRPC receive limit). A txn that writes
// must be refused before it writes, though, as the embedded store does:
// a txn whose ranges could answer more than the bound is first run
// without its writes (a dry run, read-only: dryRun in txn_past.go), and
// the real txn then runs only if nothing its ranges and compares read has
// changed since, checked by etcd in the same txn (guards); if something
// has, it starts over.

// dryRunAttempts bounds the dry runs of one txn under contention; past
// them the txn runs unguarded, its answer still bounded as it arrives.
const dryRunAttempts = 3

// singleKeyRangesBound is how many single-key ranges that read values a
// writing txn may hold before it needs a dry run: each answers one value
// at most.
const singleKeyRangesBound = 8

// tooLarge turns the read client's refusal of an answer larger than its
// receive limit into the API's error.
func (b *Backend) tooLarge(err error) error {
	if st, ok := status.FromError(err); ok && st.Code() == codes.ResourceExhausted &&
		strings.Contains(st.Message(), "received message larger than max") {
		return &kv.TooLargeError{MaxBytes: b.opts.MaxResponseBytes}
	}
	return err
}

// valueRanges returns the ranges of r's ops, in every branch and nested
// txn, that read values, and how many of them are single keys.
func valueRanges(r *kv.TxnRequest, out []kv.RangeOp) ([]kv.RangeOp, int) {
	singles := 0
	for _, branch := range [][]kv.Op{r.Success, r.Failure} {
		for _, op := range branch {
			switch {
			case op.Range != nil && !op.Range.Options.KeysOnly && !op.Range.Options.CountOnly:
				out = append(out, *op.Range)
				if len(op.Range.End) == 0 {
					singles++
				}
			case op.Txn != nil:
				var n int
				out, n = valueRanges(op.Txn, out)
				singles += n
			}
		}
	}
	return out, singles
}

// needsDryRun reports whether r writes, and could answer more than one
// value per range or reads the past (see txn_past.go).
func needsDryRun(r *kv.TxnRequest) bool {
	if !r.HasWrites() {
		return false
	}
	ranges, singles := valueRanges(r, nil)
	return len(ranges) > singles || singles > singleKeyRangesBound || hasPastReads(r)
}

// guards are compares that hold while nothing r reads (its value ranges
// at the current revision and its compares' keys) has changed since
// revision rev; one compare of the whole namespace when they would be
// more than etcd takes in a txn. (A read at a past revision reads what
// no write changes.)
func (b *Backend) guards(r *kv.TxnRequest, rev int64) []clientv3.Cmp {
	ranges, _ := valueRanges(r, nil)
	var cmps []clientv3.Cmp
	add := func(key, end []byte) {
		cmps = append(cmps, clientv3.Cmp(pb.Compare{
			Key: key, RangeEnd: end, Target: pb.Compare_MOD, Result: pb.Compare_LESS,
			TargetUnion: &pb.Compare_ModRevision{ModRevision: rev + 1},
		}))
	}
	for _, rg := range ranges {
		if rg.Options.Revision == 0 {
			add(rg.Key, rg.End)
		}
	}
	var compares func(r *kv.TxnRequest)
	compares = func(r *kv.TxnRequest) {
		for _, c := range r.Compare {
			add(c.Key, c.End)
		}
		for _, branch := range [][]kv.Op{r.Success, r.Failure} {
			for _, op := range branch {
				if op.Txn != nil {
					compares(op.Txn)
				}
			}
		}
	}
	compares(r)
	if len(cmps) > b.opts.MaxTxnOps {
		cmps = cmps[:0]
		add([]byte{0}, []byte{0})
	}
	return cmps
}

// boundedTxn runs a writing txn whose ranges could answer more than the
// bound, or read the past: a dry run first, refused if its answer is too
// large or if it fails, then the txn guarded by what the dry run read.
// A txn with past reads is sent without them, and always guarded: their
// answers are the dry run's (txn_past.go). reads is the KV the txn runs
// through (b.reads, or leasedKV's).
func (b *Backend) boundedTxn(ctx context.Context, reads clientv3.KV, r *kv.TxnRequest) (kv.TxnResult, error) {
	past := hasPastReads(r)
	send := r
	if past {
		send = withoutPastReads(r)
	}
	for attempt := 1; ; attempt++ {
		if past && attempt > maxGuardedAttempts {
			return kv.TxnResult{}, errKeptChanging
		}
		dry := dryRun(r, map[*kv.ReadLimits]*kv.ReadLimits{})
		var rev int64
		var dryRes kv.TxnResult
		err := b.call(ctx, func(ctx context.Context) error {
			resp, err := b.reads.Do(ctx, txnOp(dry))
			if err != nil {
				return b.tooLarge(err)
			}
			txn := (*pb.TxnResponse)(resp.Txn())
			rev = txn.Header.Revision
			dryRes, err = txnResult(dry, txn)
			return err
		})
		if past && isRangeCheck(err) {
			return kv.TxnResult{}, b.firstFailure(ctx, r, err)
		}
		if err != nil {
			return kv.TxnResult{}, err
		}
		var cmps []clientv3.Cmp
		if past || attempt <= dryRunAttempts {
			cmps = b.guards(r, rev)
		}
		var res kv.TxnResult
		held := true
		err = b.call(ctx, func(ctx context.Context) error {
			resp, err := reads.Txn(ctx).If(cmps...).Then(txnOp(send)).Commit()
			if err != nil {
				return b.tooLarge(err)
			}
			b.saw(resp.Header.Revision)
			if held = resp.Succeeded; !held {
				return nil
			}
			inner := resp.Responses[0].GetResponseTxn()
			inner.Header = opHeader(inner.Header, resp.Header)
			if res, err = txnResult(send, inner); err != nil || !past {
				return err
			}
			return fillPastReads(r, &res, &dryRes)
		})
		if err != nil || held {
			return res, err
		}
	}
}
