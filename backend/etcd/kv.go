package etcd

import (
	"context"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/httpkv/httpkv/kv"
)

// ViewRange is Range handing the result to fn: an etcd answer arrives
// whole, and holds copies already.
func (b *Backend) ViewRange(ctx context.Context, r kv.RangeRequest, fn func(*kv.RangeResult) error) error {
	res, err := b.Range(ctx, r)
	if err != nil {
		return err
	}
	return fn(&res)
}

// Range reads one page of a range. From a page's start key (r.From) it
// reads the page and counts the whole range in one etcd txn, so that both
// are at one revision. A range in key order is read in pieces
// (range_pages.go).
func (b *Backend) Range(ctx context.Context, r kv.RangeRequest) (kv.RangeResult, error) {
	if len(r.Key) == 0 {
		return kv.RangeResult{}, kv.Invalidf("empty key")
	}
	if err := r.Options.Validate(); err != nil {
		return kv.RangeResult{}, err
	}
	if res, ok, err := b.rangeFromCache(ctx, &r); ok {
		return res, err
	}
	if inPieces(&r.Options) {
		return b.rangeInPieces(ctx, r)
	}
	// Read in one piece, the answer arrives whole: what it may hold
	// counts against the bound on answers being built before it is asked
	// for (range_pages.go).
	if !r.Options.CountOnly {
		if err := r.Options.Limits.Reserve(b.wholeReadBytes()); err != nil {
			return kv.RangeResult{}, err
		}
	}
	page, err := b.readPiece(ctx, r, r.From, r.Options, true)
	if err != nil {
		return kv.RangeResult{}, err
	}
	return rangeResult(page, r.Options)
}

// Put writes a key. With a lease, the write checks inside itself that
// the lease is the namespace's (leasedKV); with a guard too, the guard
// sees the keys attached to the lease first. (etcd cannot ask it inside
// the write: a key attached to the lease between the two is not seen.)
func (b *Backend) Put(ctx context.Context, r kv.PutRequest, guard kv.LeaseGuard) (kv.PutResult, error) {
	if err := r.Validate(); err != nil {
		return kv.PutResult{}, err
	}
	writes := b.kv
	if r.Lease != 0 {
		if guard != nil {
			if err := b.checkLeaseKeys(ctx, []int64{r.Lease}, guard); err != nil {
				return kv.PutResult{}, err
			}
		}
		writes = b.leasedKV(b.cli.KV, []int64{r.Lease})
	}
	var res kv.PutResult
	err := b.call(ctx, func(ctx context.Context) error {
		resp, err := writes.Do(ctx, putOp(&r))
		if err != nil {
			return err
		}
		res = putResult((*pb.PutResponse)(resp.Put()))
		b.saw(res.Revision)
		return nil
	})
	return res, err
}

// Delete deletes a key or a range at one revision; deleting nothing makes
// no revision, as in etcd.
func (b *Backend) Delete(ctx context.Context, r kv.DeleteRequest) (kv.DeleteResult, error) {
	if len(r.Key) == 0 {
		return kv.DeleteResult{}, kv.Invalidf("empty key")
	}
	var res kv.DeleteResult
	err := b.call(ctx, func(ctx context.Context) error {
		resp, err := b.kv.Do(ctx, deleteOp(&r))
		if err != nil {
			return err
		}
		res = deleteResult((*pb.DeleteRangeResponse)(resp.Del()))
		b.saw(res.Revision)
		return nil
	})
	return res, err
}

// Txn runs a txn, nested txns included, as one etcd txn. It is checked
// first by the rules the embedded store applies (kv.TxnRequest.Validate,
// which are etcd's), so that both refuse the same txns with the same
// errors. When its puts name leases, it checks inside itself that they
// are the namespace's (leasedKV); with a guard too, the guard sees the
// keys of every lease its puts name first.
func (b *Backend) Txn(ctx context.Context, r kv.TxnRequest, guard kv.LeaseGuard) (kv.TxnResult, error) {
	if err := r.Validate(b.opts.MaxTxnOps); err != nil {
		return kv.TxnResult{}, err
	}
	reads := b.reads
	if leases := r.PutLeases(); len(leases) > 0 {
		if guard != nil {
			if err := b.checkLeaseKeys(ctx, leases, guard); err != nil {
				return kv.TxnResult{}, err
			}
		}
		reads = b.leasedKV(b.readCli.KV, leases)
	}
	if needsDryRun(&r) {
		return b.boundedTxn(ctx, reads, &r)
	}
	op, opless := txnOp(&r), len(r.Success) == 0 && len(r.Failure) == 0
	if opless {
		op = currentTxnOp(&r)
	}
	var res kv.TxnResult
	err := b.call(ctx, func(ctx context.Context) error {
		resp, err := reads.Do(ctx, op)
		if err != nil {
			return b.tooLarge(err)
		}
		txn := resp.Txn()
		b.saw(txn.Header.Revision)
		if opless {
			txn.Responses = nil // currentTxnOp's read
		}
		res, err = txnResult(&r, (*pb.TxnResponse)(txn))
		return err
	})
	return res, err
}

// currentTxnOp is r, a txn without ops, with a read of one key (counted,
// not returned) in its success branch: etcd serves a txn whose ops are
// all serializable reads from the state of the member that takes it,
// and holds a txn without ops for one (etcd's IsTxnSerializable), so a
// follower a little behind the leader would answer it with a revision,
// and compares, from before a write already acknowledged. With a
// linearizable read in it, the member first catches up with the leader.
func currentTxnOp(r *kv.TxnRequest) clientv3.Op {
	read := clientv3.OpGet("\x00", clientv3.WithCountOnly())
	return clientv3.OpTxn(txnCompares(r), []clientv3.Op{read}, nil)
}

// checkLeaseKeys asks guard about the namespace's keys attached to the
// leases. A lease that is not the namespace's is kv.ErrLeaseNotFound.
func (b *Backend) checkLeaseKeys(ctx context.Context, leases []int64, guard kv.LeaseGuard) error {
	var keys [][]byte
	for _, id := range leases {
		st, _, err := b.leaseStatus(ctx, b.cli, id, true)
		if err != nil {
			return err
		}
		keys = append(keys, st.Keys...)
	}
	if len(keys) == 0 {
		return nil
	}
	return guard(keys)
}
