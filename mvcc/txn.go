package mvcc

import (
	"bytes"
	"cmp"

	"github.com/httpkv/httpkv/kv"
)

// txnPath is the outcome of every compare of a txn and its nested txns,
// all evaluated before any of its ops runs.
type txnPath struct {
	succeeded bool
	nested    []*txnPath // one per nested txn op of the branch taken, in order
}

func evalPath(v view, r *kv.TxnRequest) (*txnPath, error) {
	p := &txnPath{succeeded: true}
	for i := range r.Compare {
		ok, err := evalCompare(v, &r.Compare[i])
		if err != nil {
			return nil, err
		}
		if !ok {
			p.succeeded = false
			break
		}
	}
	for _, op := range p.branch(r) {
		if op.Txn != nil {
			np, err := evalPath(v, op.Txn)
			if err != nil {
				return nil, err
			}
			p.nested = append(p.nested, np)
		}
	}
	return p, nil
}

func (p *txnPath) branch(r *kv.TxnRequest) []kv.Op {
	if p.succeeded {
		return r.Success
	}
	return r.Failure
}

func evalCompare(v view, c *kv.Compare) (bool, error) {
	krs, _ := v.keysIn(c.Key, c.End, v.rev, 0)
	if len(krs) == 0 {
		if c.Target == kv.CompareValue {
			return false, nil
		}
		return compareKV(c, &kv.KeyValue{}), nil
	}
	for _, kr := range krs {
		cur := kv.KeyValue{CreateRevision: kr.created.Main, ModRevision: kr.rev.Main, Version: kr.version}
		if c.Target == kv.CompareValue || c.Target == kv.CompareLease {
			var err error
			if cur, err = v.get(kr); err != nil {
				return false, err
			}
		}
		if !compareKV(c, &cur) {
			return false, nil
		}
	}
	return true, nil
}

func compareKV(c *kv.Compare, cur *kv.KeyValue) bool {
	var r int
	switch c.Target {
	case kv.CompareValue:
		r = bytes.Compare(cur.Value, c.Value)
	case kv.CompareVersion:
		r = cmp.Compare(cur.Version, c.Number)
	case kv.CompareCreate:
		r = cmp.Compare(cur.CreateRevision, c.Number)
	case kv.CompareMod:
		r = cmp.Compare(cur.ModRevision, c.Number)
	case kv.CompareLease:
		r = cmp.Compare(cur.Lease, c.Number)
	}
	switch c.Result {
	case kv.CompareEqual:
		return r == 0
	case kv.CompareNotEqual:
		return r != 0
	case kv.CompareGreater:
		return r > 0
	default:
		return r < 0
	}
}

// checkPath checks, before a txn writes anything, every op on the path it
// will take: ranges at valid revisions, puts whose key and lease exist as
// needed. A txn either runs whole or changes nothing.
func (t *WriteTxn) checkPath(v view, r *kv.TxnRequest, p *txnPath) error {
	nested := 0
	for _, op := range p.branch(r) {
		switch {
		case op.Range != nil:
			if _, err := v.checkRev(op.Range.Options.Revision); err != nil {
				return err
			}
		case op.Put != nil:
			cur, exists, err := v.current(op.Put.Key)
			if err != nil {
				return err
			}
			var prev *kv.KeyValue
			if exists {
				prev = &cur
			}
			if err := t.checkPut(op.Put, prev); err != nil {
				return err
			}
		case op.Txn != nil:
			if err := t.checkPath(v, op.Txn, p.nested[nested]); err != nil {
				return err
			}
			nested++
		}
	}
	return nil
}

// txnCost is the most bytes any path of r can add, for the quota check.
func txnCost(r *kv.TxnRequest) int64 {
	var most int64
	for _, branch := range [][]kv.Op{r.Success, r.Failure} {
		var c int64
		for _, op := range branch {
			switch {
			case op.Put != nil:
				c += int64(len(op.Put.Key) + len(op.Put.Value) + putOverhead)
			case op.Txn != nil:
				c += txnCost(op.Txn)
			}
		}
		most = max(most, c)
	}
	return most
}

// Txn runs a txn: compares first, on the state before the txn, then the
// ops of the branch taken, in order; later ops see earlier ones' writes,
// and all writes share one revision.
func (t *WriteTxn) Txn(r kv.TxnRequest) (kv.TxnResult, error) {
	if err := r.Validate(t.s.opts.MaxTxnOps); err != nil {
		return kv.TxnResult{}, err
	}
	// As in etcd, only puts cost space: a txn that only deletes runs
	// under NOSPACE, as a plain delete does, so that space can be freed.
	if cost := txnCost(&r); cost > 0 {
		if err := t.CheckSpace(cost); err != nil {
			return kv.TxnResult{}, err
		}
	}
	v := t.view()
	p, err := evalPath(v, &r)
	if err != nil {
		return kv.TxnResult{}, err
	}
	if err := t.checkPath(v, &r, p); err != nil {
		return kv.TxnResult{}, err
	}
	return t.runTxn(&r, p)
}

func (t *WriteTxn) runTxn(r *kv.TxnRequest, p *txnPath) (kv.TxnResult, error) {
	res := kv.TxnResult{Succeeded: p.succeeded}
	nested := 0
	for _, op := range p.branch(r) {
		var out kv.OpResult
		switch {
		case op.Range != nil:
			rr, err := t.Range(op.Range.Key, op.Range.End, op.Range.Options)
			if err != nil {
				return kv.TxnResult{}, err
			}
			out.Range = &rr
		case op.Put != nil:
			pr, err := t.put(*op.Put)
			if err != nil {
				return kv.TxnResult{}, err
			}
			out.Put = &pr
		case op.Delete != nil:
			dr, err := t.DeleteRange(*op.Delete)
			if err != nil {
				return kv.TxnResult{}, err
			}
			out.Delete = &dr
		case op.Txn != nil:
			tr, err := t.runTxn(op.Txn, p.nested[nested])
			if err != nil {
				return kv.TxnResult{}, err
			}
			nested++
			out.Txn = &tr
		}
		res.Responses = append(res.Responses, out)
	}
	res.Revision = t.Rev()
	return res, nil
}

// Txn runs a txn. One that cannot write, on any path, runs on a read
// snapshot without waiting for the committer.
func (s *Store) Txn(r kv.TxnRequest) (kv.TxnResult, error) {
	if !r.HasWrites() {
		if err := r.Validate(s.opts.MaxTxnOps); err != nil {
			return kv.TxnResult{}, err
		}
		rt, err := s.Read()
		if err != nil {
			return kv.TxnResult{}, err
		}
		defer rt.End()
		return rt.Txn(r)
	}
	return Apply(s, func(tx *WriteTxn) (kv.TxnResult, error) { return tx.Txn(r) })
}

// Txn runs a txn that has no writes on the snapshot.
func (r *ReadTxn) Txn(req kv.TxnRequest) (kv.TxnResult, error) {
	if req.HasWrites() {
		return kv.TxnResult{}, invalidf("txn with writes in a read transaction")
	}
	if err := req.Validate(r.s.opts.MaxTxnOps); err != nil {
		return kv.TxnResult{}, err
	}
	p, err := evalPath(r.v, &req)
	if err != nil {
		return kv.TxnResult{}, err
	}
	return readTxn(r.v, &req, p)
}

func readTxn(v view, r *kv.TxnRequest, p *txnPath) (kv.TxnResult, error) {
	res := kv.TxnResult{Succeeded: p.succeeded, Revision: v.rev}
	nested := 0
	for _, op := range p.branch(r) {
		var out kv.OpResult
		if op.Range != nil {
			rr, err := v.rangeKV(op.Range.Key, op.Range.End, op.Range.Options)
			if err != nil {
				return kv.TxnResult{}, err
			}
			out.Range = &rr
		} else {
			tr, err := readTxn(v, op.Txn, p.nested[nested])
			if err != nil {
				return kv.TxnResult{}, err
			}
			nested++
			out.Txn = &tr
		}
		res.Responses = append(res.Responses, out)
	}
	return res, nil
}
