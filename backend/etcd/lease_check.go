package etcd

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/namespace"

	"github.com/httpkv/httpkv/kv"
)

// A write that attaches keys to leases (a put or a txn naming leases)
// runs through leasedKV: the namespace's KV over a leaseCheckKV, which
// sends the write, as the namespace's prefixing made it, inside an etcd
// txn that first compares that the record of every lease named exists:
//
//	if record(L1) exists and record(L2) exists ...
//	then the write
//	else count record(L1), count record(L2) ...   (which is missing)
//
// So the check and the write are one etcd txn: a key of the namespace is
// attached to a lease of the namespace or to none, even when the lease
// ends and its ID is granted through another namespace in between.

// leasedKV returns the namespace's KV over inner for a write that
// attaches keys to the leases ids.
func (b *Backend) leasedKV(inner clientv3.KV, ids []int64) clientv3.KV {
	return namespace.NewKV(&leaseCheckKV{KV: inner, b: b, ids: ids}, b.opts.Namespace+keysPrefix)
}

// leaseCheckKV runs each write inside a txn guarded by the records of
// ids. Only Do and Txn are used by the writes that name leases.
type leaseCheckKV struct {
	clientv3.KV
	b   *Backend
	ids []int64
}

// Do runs a put or a txn inside the guard and answers as if it had run
// alone.
func (k *leaseCheckKV) Do(ctx context.Context, op clientv3.Op) (clientv3.OpResponse, error) {
	resp, err := k.guarded(ctx, op)
	if err != nil {
		return clientv3.OpResponse{}, err
	}
	inner := resp.Responses[0]
	switch {
	case op.IsPut():
		put := (*clientv3.PutResponse)(inner.GetResponsePut())
		put.Header = opHeader(put.Header, resp.Header)
		return put.OpResponse(), nil
	case op.IsTxn():
		return unwrapTxn(resp).OpResponse(), nil
	}
	return clientv3.OpResponse{}, kv.Invalidf("a write with a lease is a put or a txn")
}

// Txn returns a txn whose Commit runs inside the guard.
func (k *leaseCheckKV) Txn(ctx context.Context) clientv3.Txn {
	return &leaseCheckTxn{k: k, ctx: ctx}
}

// guarded runs op inside the txn that checks the records, and fails with
// kv.ErrLeaseNotFound, naming the lease, when one has none.
func (k *leaseCheckKV) guarded(ctx context.Context, op clientv3.Op) (*clientv3.TxnResponse, error) {
	cmps := make([]clientv3.Cmp, len(k.ids))
	counts := make([]clientv3.Op, len(k.ids))
	for i, id := range k.ids {
		if id < 1 || id > maxLeaseID {
			return nil, kv.LeaseNotFound(id)
		}
		record := k.b.leaseRecord(id)
		cmps[i] = clientv3.Compare(clientv3.CreateRevision(record), ">", 0)
		counts[i] = clientv3.OpGet(record, clientv3.WithCountOnly())
	}
	resp, err := k.KV.Txn(ctx).If(cmps...).Then(op).Else(counts...).Commit()
	if err != nil {
		return nil, err
	}
	if !resp.Succeeded {
		k.b.saw(resp.Header.Revision)
		for i, r := range resp.Responses {
			if r.GetResponseRange().GetCount() == 0 {
				return nil, kv.LeaseNotFound(k.ids[i])
			}
		}
		return nil, kv.LeaseNotFound(k.ids[0]) // a record gone and back: one of them
	}
	return resp, nil
}

// unwrapTxn returns the answer of the txn run inside the guard, at the
// guard's revision.
func unwrapTxn(resp *clientv3.TxnResponse) *clientv3.TxnResponse {
	inner := resp.Responses[0].GetResponseTxn()
	return &clientv3.TxnResponse{Header: opHeader(inner.Header, resp.Header), Succeeded: inner.Succeeded, Responses: inner.Responses}
}

// leaseCheckTxn is a txn built by the namespace's prefixing, committed
// inside the guard.
type leaseCheckTxn struct {
	k               *leaseCheckKV
	ctx             context.Context
	cmps            []clientv3.Cmp
	thenOps, elseOp []clientv3.Op
}

func (t *leaseCheckTxn) If(cs ...clientv3.Cmp) clientv3.Txn {
	t.cmps = append(t.cmps, cs...)
	return t
}

func (t *leaseCheckTxn) Then(ops ...clientv3.Op) clientv3.Txn {
	t.thenOps = append(t.thenOps, ops...)
	return t
}

func (t *leaseCheckTxn) Else(ops ...clientv3.Op) clientv3.Txn {
	t.elseOp = append(t.elseOp, ops...)
	return t
}

func (t *leaseCheckTxn) Commit() (*clientv3.TxnResponse, error) {
	resp, err := t.k.guarded(t.ctx, clientv3.OpTxn(t.cmps, t.thenOps, t.elseOp))
	if err != nil {
		return nil, err
	}
	return unwrapTxn(resp), nil
}
