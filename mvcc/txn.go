package mvcc

import (
	"bytes"
	"cmp"

	"github.com/httpkv/httpkv/keyrange"
)

// CompareTarget is the field a txn compare looks at.
type CompareTarget int

const (
	CompareValue CompareTarget = iota
	CompareVersion
	CompareCreate
	CompareMod
	CompareLease
)

// CompareResult is the relation a txn compare asks for.
type CompareResult int

const (
	CompareEqual CompareResult = iota
	CompareNotEqual
	CompareGreater
	CompareLess
)

// Compare is one condition of a txn. Over a range (End set, as in
// RangeOptions) it holds when it holds for every key in the range. On a
// key that does not exist, every field compares as zero, and a value
// compare is false.
type Compare struct {
	Key    []byte
	End    []byte
	Target CompareTarget
	Result CompareResult
	Value  []byte // for CompareValue
	Number int64  // for the other targets
}

// Op is one operation of a txn branch; exactly one field is set.
type Op struct {
	Range  *RangeOp
	Put    *PutRequest
	Delete *DeleteRequest
	Txn    *TxnRequest
}

// RangeOp is a range inside a txn.
type RangeOp struct {
	Key     []byte
	End     []byte
	Options RangeOptions
}

// TxnRequest runs Success if every compare holds, Failure otherwise.
type TxnRequest struct {
	Compare []Compare
	Success []Op
	Failure []Op
}

// OpResult is the result of one Op; the field matching the op is set.
// Its revision is the one current when the op ran, as in etcd: an op
// before the txn's first write reports the revision the txn began at,
// one after it the txn's own revision.
type OpResult struct {
	Range  *RangeResult
	Put    *PutResult
	Delete *DeleteResult
	Txn    *TxnResult
}

// TxnResult is the outcome of a txn.
type TxnResult struct {
	// Revision is the revision of the txn's writes, or the current one if
	// it wrote nothing.
	Revision  int64
	Succeeded bool
	Responses []OpResult
}

// validate checks a txn's shape as etcd does: the number of compares and
// ops per branch (nested txns share what the outer one leaves), non-empty
// keys, known targets, and no key written twice on any path.
func (r *TxnRequest) validate(maxOps int) error {
	if err := r.validateShape(maxOps); err != nil {
		return err
	}
	if _, _, err := checkIntervals(r.Success); err != nil {
		return err
	}
	_, _, err := checkIntervals(r.Failure)
	return err
}

func (r *TxnRequest) validateShape(maxOps int) error {
	n := max(len(r.Compare), len(r.Success), len(r.Failure))
	if n > maxOps {
		return ErrTooManyOps
	}
	for _, c := range r.Compare {
		if len(c.Key) == 0 {
			return invalidf("empty key in compare")
		}
		if c.Target < CompareValue || c.Target > CompareLease {
			return invalidf("unknown compare target %d", c.Target)
		}
		if c.Result < CompareEqual || c.Result > CompareLess {
			return invalidf("unknown compare result %d", c.Result)
		}
	}
	for _, branch := range [][]Op{r.Success, r.Failure} {
		for _, op := range branch {
			if err := op.validate(maxOps - n); err != nil {
				return err
			}
		}
	}
	return nil
}

func (op *Op) validate(maxOps int) error {
	set := 0
	for _, p := range []bool{op.Range != nil, op.Put != nil, op.Delete != nil, op.Txn != nil} {
		if p {
			set++
		}
	}
	if set != 1 {
		return invalidf("a txn op must be exactly one of range, put, delete, txn")
	}
	switch {
	case op.Range != nil:
		if len(op.Range.Key) == 0 {
			return invalidf("empty key")
		}
		return op.Range.Options.validate()
	case op.Put != nil:
		return op.Put.validate()
	case op.Delete != nil:
		if len(op.Delete.Key) == 0 {
			return invalidf("empty key")
		}
		return nil
	default:
		return op.Txn.validateShape(maxOps)
	}
}

// checkIntervals reports a key written twice in ops: two puts of one key,
// or a put of a key a delete of the same or an enclosing level covers. The
// two branches of a nested txn may write the same key, as only one runs.
// It returns the puts and deletes ops can make, for the enclosing level.
func checkIntervals(ops []Op) (map[string]struct{}, []keyrange.Range, error) {
	var dels []keyrange.Range
	for _, op := range ops {
		if op.Delete != nil {
			dels = append(dels, keyrange.Range{Key: op.Delete.Key, End: op.Delete.End})
		}
	}
	deleted := func(k []byte) bool {
		for _, iv := range dels {
			if iv.Contains(k) {
				return true
			}
		}
		return false
	}
	puts := make(map[string]struct{})
	for _, op := range ops {
		if op.Txn == nil {
			continue
		}
		putsThen, delsThen, err := checkIntervals(op.Txn.Success)
		if err != nil {
			return nil, nil, err
		}
		putsElse, delsElse, err := checkIntervals(op.Txn.Failure)
		if err != nil {
			return nil, nil, err
		}
		for k := range putsThen {
			if _, dup := puts[k]; dup || deleted([]byte(k)) {
				return nil, nil, ErrDuplicateKey
			}
			puts[k] = struct{}{}
		}
		for k := range putsElse {
			if _, dup := puts[k]; dup {
				if _, sameTxn := putsThen[k]; !sameTxn {
					return nil, nil, ErrDuplicateKey
				}
			}
			if deleted([]byte(k)) {
				return nil, nil, ErrDuplicateKey
			}
			puts[k] = struct{}{}
		}
		dels = append(dels, delsThen...)
		dels = append(dels, delsElse...)
	}
	for _, op := range ops {
		if op.Put == nil {
			continue
		}
		k := op.Put.Key
		if _, dup := puts[string(k)]; dup || deleted(k) {
			return nil, nil, ErrDuplicateKey
		}
		puts[string(k)] = struct{}{}
	}
	return puts, dels, nil
}

// HasWrites reports whether any branch of r, at any depth, can write: a
// txn that cannot runs on a read snapshot.
func (r *TxnRequest) HasWrites() bool {
	for _, branch := range [][]Op{r.Success, r.Failure} {
		for _, op := range branch {
			if op.Put != nil || op.Delete != nil || (op.Txn != nil && op.Txn.HasWrites()) {
				return true
			}
		}
	}
	return false
}

// txnPath is the outcome of every compare of a txn and its nested txns,
// all evaluated before any of its ops runs.
type txnPath struct {
	succeeded bool
	nested    []*txnPath // one per nested txn op of the branch taken, in order
}

func evalPath(v view, r *TxnRequest) (*txnPath, error) {
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

func (p *txnPath) branch(r *TxnRequest) []Op {
	if p.succeeded {
		return r.Success
	}
	return r.Failure
}

func evalCompare(v view, c *Compare) (bool, error) {
	krs, _ := v.keysIn(c.Key, c.End, v.rev, 0)
	if len(krs) == 0 {
		if c.Target == CompareValue {
			return false, nil
		}
		return compareKV(c, &KeyValue{}), nil
	}
	for _, kr := range krs {
		kv := KeyValue{CreateRevision: kr.created.Main, ModRevision: kr.rev.Main, Version: kr.version}
		if c.Target == CompareValue || c.Target == CompareLease {
			var err error
			if kv, err = v.get(kr); err != nil {
				return false, err
			}
		}
		if !compareKV(c, &kv) {
			return false, nil
		}
	}
	return true, nil
}

func compareKV(c *Compare, kv *KeyValue) bool {
	var r int
	switch c.Target {
	case CompareValue:
		r = bytes.Compare(kv.Value, c.Value)
	case CompareVersion:
		r = cmp.Compare(kv.Version, c.Number)
	case CompareCreate:
		r = cmp.Compare(kv.CreateRevision, c.Number)
	case CompareMod:
		r = cmp.Compare(kv.ModRevision, c.Number)
	case CompareLease:
		r = cmp.Compare(kv.Lease, c.Number)
	}
	switch c.Result {
	case CompareEqual:
		return r == 0
	case CompareNotEqual:
		return r != 0
	case CompareGreater:
		return r > 0
	default:
		return r < 0
	}
}

// checkPath checks, before a txn writes anything, every op on the path it
// will take: ranges at valid revisions, puts whose key and lease exist as
// needed. A txn either runs whole or changes nothing.
func (t *WriteTxn) checkPath(v view, r *TxnRequest, p *txnPath) error {
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
			var prev *KeyValue
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
func txnCost(r *TxnRequest) int64 {
	var most int64
	for _, branch := range [][]Op{r.Success, r.Failure} {
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
func (t *WriteTxn) Txn(r TxnRequest) (TxnResult, error) {
	if err := r.validate(t.s.opts.MaxTxnOps); err != nil {
		return TxnResult{}, err
	}
	if r.HasWrites() {
		if err := t.CheckSpace(txnCost(&r)); err != nil {
			return TxnResult{}, err
		}
	}
	v := t.view()
	p, err := evalPath(v, &r)
	if err != nil {
		return TxnResult{}, err
	}
	if err := t.checkPath(v, &r, p); err != nil {
		return TxnResult{}, err
	}
	return t.runTxn(&r, p)
}

func (t *WriteTxn) runTxn(r *TxnRequest, p *txnPath) (TxnResult, error) {
	res := TxnResult{Succeeded: p.succeeded}
	nested := 0
	for _, op := range p.branch(r) {
		var out OpResult
		switch {
		case op.Range != nil:
			rr, err := t.Range(op.Range.Key, op.Range.End, op.Range.Options)
			if err != nil {
				return TxnResult{}, err
			}
			out.Range = &rr
		case op.Put != nil:
			pr, err := t.put(*op.Put)
			if err != nil {
				return TxnResult{}, err
			}
			out.Put = &pr
		case op.Delete != nil:
			dr, err := t.DeleteRange(*op.Delete)
			if err != nil {
				return TxnResult{}, err
			}
			out.Delete = &dr
		case op.Txn != nil:
			tr, err := t.runTxn(op.Txn, p.nested[nested])
			if err != nil {
				return TxnResult{}, err
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
func (s *Store) Txn(r TxnRequest) (TxnResult, error) {
	if !r.HasWrites() {
		if err := r.validate(s.opts.MaxTxnOps); err != nil {
			return TxnResult{}, err
		}
		rt, err := s.Read()
		if err != nil {
			return TxnResult{}, err
		}
		defer rt.End()
		return rt.Txn(r)
	}
	return Apply(s, func(tx *WriteTxn) (TxnResult, error) { return tx.Txn(r) })
}

// Txn runs a txn that has no writes on the snapshot.
func (r *ReadTxn) Txn(req TxnRequest) (TxnResult, error) {
	if req.HasWrites() {
		return TxnResult{}, invalidf("txn with writes in a read transaction")
	}
	if err := req.validate(r.s.opts.MaxTxnOps); err != nil {
		return TxnResult{}, err
	}
	p, err := evalPath(r.v, &req)
	if err != nil {
		return TxnResult{}, err
	}
	return readTxn(r.v, &req, p)
}

func readTxn(v view, r *TxnRequest, p *txnPath) (TxnResult, error) {
	res := TxnResult{Succeeded: p.succeeded, Revision: v.rev}
	nested := 0
	for _, op := range p.branch(r) {
		var out OpResult
		if op.Range != nil {
			rr, err := v.rangeKV(op.Range.Key, op.Range.End, op.Range.Options)
			if err != nil {
				return TxnResult{}, err
			}
			out.Range = &rr
		} else {
			tr, err := readTxn(v, op.Txn, p.nested[nested])
			if err != nil {
				return TxnResult{}, err
			}
			nested++
			out.Txn = &tr
		}
		res.Responses = append(res.Responses, out)
	}
	return res, nil
}
