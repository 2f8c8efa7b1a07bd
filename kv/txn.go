package kv

import "github.com/httpkv/httpkv/keyrange"

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

// Compare is one condition of a txn on the keys of Key and End (a
// keyrange.Range). Over a range it holds when it holds for every key in
// the range. On a
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

// RangeOp is a range inside a txn: the keys of Key and End (a
// keyrange.Range).
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

// Validate checks a txn's shape as etcd does: the number of compares and
// ops per branch, at most maxOps (nested txns share what the outer one
// leaves), non-empty keys, known targets, and no key written twice on any
// path.
func (r *TxnRequest) Validate(maxOps int) error {
	if err := r.validateShape(txnBudget{max: maxOps, left: maxOps}); err != nil {
		return err
	}
	if _, _, err := checkIntervals(r.Success); err != nil {
		return err
	}
	_, _, err := checkIntervals(r.Failure)
	return err
}

// txnBudget is what a txn's lists may hold: max, the bound,
// less what the lists of the txns it is nested in took (left), depth
// levels down.
type txnBudget struct {
	max, left, depth int
}

func (r *TxnRequest) validateShape(b txnBudget) error {
	n := max(len(r.Compare), len(r.Success), len(r.Failure))
	switch {
	case n > b.left && b.depth == 0:
		return Errorf(ErrTooManyOps, "the txn has %d operations in one list; at most %d are allowed", n, b.max)
	case n > b.left:
		return Errorf(ErrTooManyOps, "a txn at nesting level %d (the outermost is 1) has %d operations in one list, and %d are left for it of the bound (%d): nested txns share the bound with the txns around them, so txns of one operation each nest at most %d levels", b.depth+1, n, b.left, b.max, b.max)
	}
	for _, c := range r.Compare {
		if len(c.Key) == 0 {
			return Invalidf("a compare's key must not be empty")
		}
		if c.Target < CompareValue || c.Target > CompareLease {
			return Invalidf("unknown compare target %d", c.Target)
		}
		if c.Result < CompareEqual || c.Result > CompareLess {
			return Invalidf("unknown compare result %d", c.Result)
		}
	}
	for _, branch := range [][]Op{r.Success, r.Failure} {
		for _, op := range branch {
			if err := op.validate(txnBudget{max: b.max, left: b.left - n, depth: b.depth + 1}); err != nil {
				return err
			}
		}
	}
	return nil
}

func (op *Op) validate(b txnBudget) error {
	set := 0
	for _, p := range []bool{op.Range != nil, op.Put != nil, op.Delete != nil, op.Txn != nil} {
		if p {
			set++
		}
	}
	if set != 1 {
		return Invalidf("a txn op must be exactly one of range, put, delete, txn")
	}
	switch {
	case op.Range != nil:
		if len(op.Range.Key) == 0 {
			return Invalidf("key must not be empty")
		}
		return op.Range.Options.Validate()
	case op.Put != nil:
		return op.Put.Validate()
	case op.Delete != nil:
		if len(op.Delete.Key) == 0 {
			return Invalidf("key must not be empty")
		}
		return nil
	default:
		return op.Txn.validateShape(b)
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
				return nil, nil, duplicateKey([]byte(k))
			}
			puts[k] = struct{}{}
		}
		for k := range putsElse {
			if _, dup := puts[k]; dup {
				if _, sameTxn := putsThen[k]; !sameTxn {
					return nil, nil, duplicateKey([]byte(k))
				}
			}
			if deleted([]byte(k)) {
				return nil, nil, duplicateKey([]byte(k))
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
			return nil, nil, duplicateKey(k)
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

// duplicateKey is ErrDuplicateKey for key.
func duplicateKey(key []byte) error {
	return Errorf(ErrDuplicateKey, "the txn writes the key %q twice: give each key at most one put or delete", key)
}
