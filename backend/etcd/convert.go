package etcd

import (
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/httpkv/httpkv/kv"
)

// Conversions between package kv's requests and results and etcd's. The
// key ranges are the same (keyrange's encoding is etcd's); the namespace
// wrappers of clientv3 add and strip the prefix.

// toKV converts a key version. The bytes are the answer's own, not
// shared with anything else.
func toKV(p *mvccpb.KeyValue) kv.KeyValue {
	return kv.KeyValue{
		Key: p.Key, Value: p.Value,
		CreateRevision: p.CreateRevision, ModRevision: p.ModRevision,
		Version: p.Version, Lease: p.Lease,
	}
}

func toKVs(ps []*mvccpb.KeyValue) []kv.KeyValue {
	out := make([]kv.KeyValue, len(ps))
	for i, p := range ps {
		out[i] = toKV(p)
	}
	return out
}

func toKVPtr(p *mvccpb.KeyValue) *kv.KeyValue {
	if p == nil {
		return nil
	}
	k := toKV(p)
	return &k
}

// toEvent converts a watch event; a delete's KeyValue carries the key and
// the delete's revision, as etcd's does.
func toEvent(e *clientv3.Event) kv.Event {
	ev := kv.Event{Type: kv.EventPut, KV: toKV(e.Kv), PrevKV: toKVPtr(e.PrevKv)}
	if e.Type == mvccpb.DELETE {
		ev.Type = kv.EventDelete
	}
	return ev
}

var (
	sortTargets = map[kv.SortTarget]clientv3.SortTarget{
		kv.SortByKey: clientv3.SortByKey, kv.SortByVersion: clientv3.SortByVersion,
		kv.SortByCreate: clientv3.SortByCreateRevision, kv.SortByMod: clientv3.SortByModRevision,
		kv.SortByValue: clientv3.SortByValue,
	}
	sortOrders = map[kv.SortOrder]clientv3.SortOrder{
		kv.SortNone: clientv3.SortNone, kv.SortAscend: clientv3.SortAscend, kv.SortDescend: clientv3.SortDescend,
	}
)

// rangeOp is a range of [key, end) with o's options. A range without a
// limit under a bound of keys (kv.ReadLimits.MaxKeys) asks for one key
// more than the bound, to tell that it is passed without reading more.
func rangeOp(key, end []byte, o kv.RangeOptions) clientv3.Op {
	opts := []clientv3.OpOption{
		clientv3.WithRev(o.Revision),
		clientv3.WithSort(sortTargets[o.SortTarget], sortOrders[o.SortOrder]),
		clientv3.WithMinModRev(o.MinModRevision), clientv3.WithMaxModRev(o.MaxModRevision),
		clientv3.WithMinCreateRev(o.MinCreateRevision), clientv3.WithMaxCreateRev(o.MaxCreateRevision),
	}
	if len(end) > 0 {
		opts = append(opts, clientv3.WithRange(string(end)))
	}
	limit := o.Limit
	if limit == 0 && !o.CountOnly && o.Limits != nil && o.Limits.MaxKeys > 0 {
		limit = o.Limits.MaxKeys + 1
	}
	if limit > 0 {
		opts = append(opts, clientv3.WithLimit(limit))
	}
	if o.KeysOnly {
		opts = append(opts, clientv3.WithKeysOnly())
	}
	if o.CountOnly {
		opts = append(opts, clientv3.WithCountOnly())
	}
	return clientv3.OpGet(string(key), opts...)
}

// rangeResult converts a range's answer and checks it against o's
// bounds of keys and bytes.
func rangeResult(r *pb.RangeResponse, o kv.RangeOptions) (kv.RangeResult, error) {
	res := kv.RangeResult{Count: r.Count, More: r.More, Revision: r.Header.Revision}
	if o.CountOnly {
		return res, nil
	}
	if l := o.Limits; o.Limit == 0 && l != nil && l.MaxKeys > 0 && int64(len(r.Kvs)) > l.MaxKeys {
		return kv.RangeResult{}, &kv.TooLargeError{MaxKeys: l.MaxKeys}
	}
	res.KVs = make([]kv.KeyValue, len(r.Kvs))
	for i, p := range r.Kvs {
		if err := o.Limits.Charge(len(p.Key) + len(p.Value)); err != nil {
			return kv.RangeResult{}, err
		}
		res.KVs[i] = toKV(p)
	}
	return res, nil
}

func putOp(r *kv.PutRequest) clientv3.Op {
	var opts []clientv3.OpOption
	if r.Lease != 0 {
		opts = append(opts, clientv3.WithLease(clientv3.LeaseID(r.Lease)))
	}
	if r.PrevKV {
		opts = append(opts, clientv3.WithPrevKV())
	}
	if r.IgnoreValue {
		opts = append(opts, clientv3.WithIgnoreValue())
	}
	if r.IgnoreLease {
		opts = append(opts, clientv3.WithIgnoreLease())
	}
	return clientv3.OpPut(string(r.Key), string(r.Value), opts...)
}

func putResult(r *pb.PutResponse) kv.PutResult {
	return kv.PutResult{Revision: r.Header.Revision, PrevKV: toKVPtr(r.PrevKv)}
}

func deleteOp(r *kv.DeleteRequest) clientv3.Op {
	var opts []clientv3.OpOption
	if len(r.End) > 0 {
		opts = append(opts, clientv3.WithRange(string(r.End)))
	}
	if r.PrevKV {
		opts = append(opts, clientv3.WithPrevKV())
	}
	return clientv3.OpDelete(string(r.Key), opts...)
}

func deleteResult(r *pb.DeleteRangeResponse) kv.DeleteResult {
	res := kv.DeleteResult{Revision: r.Header.Revision, Deleted: r.Deleted}
	if len(r.PrevKvs) > 0 {
		res.PrevKVs = toKVs(r.PrevKvs)
	}
	return res
}

var (
	compareTargets = map[kv.CompareTarget]pb.Compare_CompareTarget{
		kv.CompareValue: pb.Compare_VALUE, kv.CompareVersion: pb.Compare_VERSION,
		kv.CompareCreate: pb.Compare_CREATE, kv.CompareMod: pb.Compare_MOD, kv.CompareLease: pb.Compare_LEASE,
	}
	compareResults = map[kv.CompareResult]pb.Compare_CompareResult{
		kv.CompareEqual: pb.Compare_EQUAL, kv.CompareNotEqual: pb.Compare_NOT_EQUAL,
		kv.CompareGreater: pb.Compare_GREATER, kv.CompareLess: pb.Compare_LESS,
	}
)

func compare(c *kv.Compare) clientv3.Cmp {
	p := pb.Compare{Key: c.Key, RangeEnd: c.End, Target: compareTargets[c.Target], Result: compareResults[c.Result]}
	switch c.Target {
	case kv.CompareValue:
		p.TargetUnion = &pb.Compare_Value{Value: c.Value}
	case kv.CompareVersion:
		p.TargetUnion = &pb.Compare_Version{Version: c.Number}
	case kv.CompareCreate:
		p.TargetUnion = &pb.Compare_CreateRevision{CreateRevision: c.Number}
	case kv.CompareMod:
		p.TargetUnion = &pb.Compare_ModRevision{ModRevision: c.Number}
	case kv.CompareLease:
		p.TargetUnion = &pb.Compare_Lease{Lease: c.Number}
	}
	return clientv3.Cmp(p)
}

// txnOp converts a txn, nested txns included, with each range's bounds.
func txnOp(r *kv.TxnRequest) clientv3.Op {
	return clientv3.OpTxn(txnCompares(r), ops(r.Success), ops(r.Failure))
}

func txnCompares(r *kv.TxnRequest) []clientv3.Cmp {
	cmps := make([]clientv3.Cmp, len(r.Compare))
	for i := range r.Compare {
		cmps[i] = compare(&r.Compare[i])
	}
	return cmps
}

func ops(branch []kv.Op) []clientv3.Op {
	out := make([]clientv3.Op, len(branch))
	for i, op := range branch {
		switch {
		case op.Range != nil:
			out[i] = rangeOp(op.Range.Key, op.Range.End, op.Range.Options)
		case op.Put != nil:
			out[i] = putOp(op.Put)
		case op.Delete != nil:
			out[i] = deleteOp(op.Delete)
		case op.Txn != nil:
			out[i] = txnOp(op.Txn)
		}
	}
	return out
}

// opHeader is the header of an op of a txn: etcd's own, which says at
// which revision the op read or wrote (a range before the txn's writes
// reads at the revision before the txn's), or the txn's when etcd left it
// empty (a nested txn's).
func opHeader(op, txn *pb.ResponseHeader) *pb.ResponseHeader {
	if op == nil || op.Revision == 0 {
		return txn
	}
	return op
}

// txnResult converts a txn's answer; r is the request, for the bounds of
// its ranges. Every op of a txn answers at the txn's revision.
func txnResult(req *kv.TxnRequest, r *pb.TxnResponse) (kv.TxnResult, error) {
	res := kv.TxnResult{Revision: r.Header.Revision, Succeeded: r.Succeeded}
	branch := req.Success
	if !r.Succeeded {
		branch = req.Failure
	}
	res.Responses = make([]kv.OpResult, len(r.Responses))
	for i, op := range r.Responses {
		out := &res.Responses[i]
		switch v := op.Response.(type) {
		case *pb.ResponseOp_ResponseRange:
			v.ResponseRange.Header = opHeader(v.ResponseRange.Header, r.Header)
			rr, err := rangeResult(v.ResponseRange, branch[i].Range.Options)
			if err != nil {
				return kv.TxnResult{}, err
			}
			out.Range = &rr
		case *pb.ResponseOp_ResponsePut:
			v.ResponsePut.Header = opHeader(v.ResponsePut.Header, r.Header)
			pr := putResult(v.ResponsePut)
			out.Put = &pr
		case *pb.ResponseOp_ResponseDeleteRange:
			v.ResponseDeleteRange.Header = opHeader(v.ResponseDeleteRange.Header, r.Header)
			dr := deleteResult(v.ResponseDeleteRange)
			out.Delete = &dr
		case *pb.ResponseOp_ResponseTxn:
			v.ResponseTxn.Header = opHeader(v.ResponseTxn.Header, r.Header)
			tr, err := txnResult(branch[i].Txn, v.ResponseTxn)
			if err != nil {
				return kv.TxnResult{}, err
			}
			out.Txn = &tr
		}
	}
	return res, nil
}
