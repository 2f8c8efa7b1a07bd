package httpapi

import (
	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
)

// The body of POST /v1/txn, declared once: the handler decodes into these
// types (which reject any other field) and swag documents them. Key-like
// fields come as a string or its *_base64 twin, pointers so that an empty
// string differs from an absent field; exactly one of put, delete, range
// and txn is set per op.

// txnRequestDoc is the body of POST /v1/txn.
type txnRequestDoc struct {
	// Conditions, all of which must hold for success to run; none means success runs.
	Compare []compareDoc `json:"compare,omitempty"`
	// Ops run when every compare holds.
	Success []requestOpDoc `json:"success,omitempty"`
	// Ops run otherwise.
	Failure []requestOpDoc `json:"failure,omitempty"`
} // @name TxnRequest

// compareDoc is one condition of a txn.
type compareDoc struct {
	selector
	// What is compared; the operand is the field of the same name (create: create_revision, mod: mod_revision).
	Target string `json:"target" enums:"value,version,create,mod,lease" example:"value"`
	// How the target compares with the operand; over a range, every key of it must satisfy the condition.
	Result string `json:"result" enums:"equal,not_equal,greater,less" example:"equal"`
	// The operand of a value compare (or value_base64).
	Value       *string `json:"value,omitempty" example:"x"`
	ValueBase64 *string `json:"value_base64,omitempty" format:"byte"`
	// The operand of a version compare (0: the key does not exist).
	Version *int64 `json:"version,omitempty" format:"int64"`
	// The operand of a create compare.
	CreateRevision *int64 `json:"create_revision,omitempty" format:"int64"`
	// The operand of a mod compare.
	ModRevision *int64 `json:"mod_revision,omitempty" format:"int64"`
	// The operand of a lease compare.
	Lease *int64 `json:"lease,omitempty" format:"int64"`
} // @name Compare

// requestOpDoc is one op of a txn branch: exactly one field is set.
type requestOpDoc struct {
	Put    *putOpDoc      `json:"put,omitempty"`
	Delete *deleteOpDoc   `json:"delete,omitempty"`
	Range  *rangeOpDoc    `json:"range,omitempty"`
	Txn    *txnRequestDoc `json:"txn,omitempty"`
} // @name RequestOp

// putOpDoc is a put in a txn.
type putOpDoc struct {
	// key or key_base64 is required.
	Key       *string `json:"key,omitempty" example:"a"`
	KeyBase64 *string `json:"key_base64,omitempty" format:"byte"`
	// The value (or value_base64); none is the empty value.
	Value       *string `json:"value,omitempty" example:"y"`
	ValueBase64 *string `json:"value_base64,omitempty" format:"byte"`
	// Attach the key to this lease; 0 for none.
	Lease int64 `json:"lease,omitempty" format:"int64"`
	// Answer with the key as it was before.
	PrevKV bool `json:"prev_kv,omitempty"`
	// Keep the current value (the key must exist).
	IgnoreValue bool `json:"ignore_value,omitempty"`
	// Keep the current lease (the key must exist).
	IgnoreLease bool `json:"ignore_lease,omitempty"`
} // @name PutOp

// deleteOpDoc is a delete in a txn.
type deleteOpDoc struct {
	selector
	// Answer with the deleted keys.
	PrevKV bool `json:"prev_kv,omitempty"`
} // @name DeleteOp

// rangeOpDoc is a read in a txn, with the options of GET /v1/kv but pages.
type rangeOpDoc struct {
	selector
	Revision int64 `json:"revision,omitempty" format:"int64" minimum:"0"`
	// At most this many keys; 0 or none: every key, as in etcd, but a range that then matches more than 10000 keys fails the txn (400). The ranges of one txn together return at most --max-response-bytes of keys and values.
	Limit             int64  `json:"limit,omitempty" format:"int64" minimum:"0" maximum:"10000"`
	SortTarget        string `json:"sort_target,omitempty" enums:"key,version,create,mod,value"`
	SortOrder         string `json:"sort_order,omitempty" enums:"none,ascend,descend"`
	KeysOnly          bool   `json:"keys_only,omitempty"`
	CountOnly         bool   `json:"count_only,omitempty"`
	MinModRevision    int64  `json:"min_mod_revision,omitempty" format:"int64" minimum:"0"`
	MaxModRevision    int64  `json:"max_mod_revision,omitempty" format:"int64" minimum:"0"`
	MinCreateRevision int64  `json:"min_create_revision,omitempty" format:"int64" minimum:"0"`
	MaxCreateRevision int64  `json:"max_create_revision,omitempty" format:"int64" minimum:"0"`
} // @name RangeOp

var (
	compareTargets = map[string]kv.CompareTarget{
		"value": kv.CompareValue, "version": kv.CompareVersion, "create": kv.CompareCreate,
		"mod": kv.CompareMod, "lease": kv.CompareLease,
	}
	compareResults = map[string]kv.CompareResult{
		"equal": kv.CompareEqual, "not_equal": kv.CompareNotEqual,
		"greater": kv.CompareGreater, "less": kv.CompareLess,
	}
)

// selector is the fields that name a key or a range in a request body,
// as the query parameters of GET /v1/kv do: declared once, embedded in
// each body that names one (a compare, a delete, a range, a permission).
type selector struct {
	// The key, or the start of the range [key, range_end); key or key_base64 is required.
	Key       *string `json:"key,omitempty" example:"a"`
	KeyBase64 *string `json:"key_base64,omitempty" format:"byte"`
	// At most one of range_end, prefix and from_key; none is the single key.
	RangeEnd       *string `json:"range_end,omitempty"`
	RangeEndBase64 *string `json:"range_end_base64,omitempty" format:"byte"`
	// Every key with the prefix key.
	Prefix bool `json:"prefix,omitempty"`
	// Every key >= key.
	FromKey bool `json:"from_key,omitempty"`
}

// selection resolves key, range_end, prefix and from_key.
func (j selector) selection() (keyrange.Range, error) {
	prefix, fromKey := j.Prefix, j.FromKey
	k, err := requireKey(twin{j.Key, j.KeyBase64}, "key")
	if err != nil {
		return keyrange.Range{}, err
	}
	e, hasEnd, err := twin{j.RangeEnd, j.RangeEndBase64}.get("range_end")
	if err != nil {
		return keyrange.Range{}, err
	}
	n := 0
	for _, set := range []bool{hasEnd, prefix, fromKey} {
		if set {
			n++
		}
	}
	switch {
	case n > 1:
		return keyrange.Range{}, badRequest("give at most one of range_end, prefix and from_key")
	case prefix:
		return keyrange.Prefix(k), nil
	case fromKey:
		return keyrange.FromKey(k), nil
	case hasEnd && len(e) == 0:
		return keyrange.Range{}, badRequest("range_end must not be empty")
	case hasEnd:
		return keyrange.Between(k, e), nil
	}
	return keyrange.Single(k), nil
}

// toTxn converts the wire txn, and collects what it can touch into a.
func (j *txnRequestDoc) toTxn(a *Access) (kv.TxnRequest, error) {
	var t kv.TxnRequest
	for i := range j.Compare {
		c := &j.Compare[i]
		sel, err := c.selection()
		if err != nil {
			return t, err
		}
		target, ok := compareTargets[c.Target]
		if !ok {
			return t, badRequest("compare[%d].target must be value, version, create, mod or lease, not %q", i, c.Target)
		}
		result, ok := compareResults[c.Result]
		if !ok {
			return t, badRequest("compare[%d].result must be equal, not_equal, greater or less, not %q", i, c.Result)
		}
		mc := kv.Compare{Key: sel.Key, End: sel.End, Target: target, Result: result}
		var operand *int64
		switch target {
		case kv.CompareValue:
			v, set, err := twin{c.Value, c.ValueBase64}.get("value")
			if err != nil {
				return t, err
			}
			if !set {
				return t, badRequest("compare[%d] has target \"value\" and needs the field \"value\" (or \"value_base64\") to compare with", i)
			}
			mc.Value = v
		case kv.CompareVersion:
			operand = c.Version
		case kv.CompareCreate:
			operand = c.CreateRevision
		case kv.CompareMod:
			operand = c.ModRevision
		case kv.CompareLease:
			operand = c.Lease
		}
		if target != kv.CompareValue {
			if operand == nil {
				field := map[kv.CompareTarget]string{kv.CompareVersion: "version", kv.CompareCreate: "create_revision",
					kv.CompareMod: "mod_revision", kv.CompareLease: "lease"}[target]
				return t, badRequest("compare[%d] has target %q and needs the field %q to compare with", i, c.Target, field)
			}
			mc.Number = *operand
		}
		t.Compare = append(t.Compare, mc)
		a.Read = append(a.Read, sel)
	}
	var err error
	if t.Success, err = toOps(j.Success, a); err != nil {
		return t, err
	}
	t.Failure, err = toOps(j.Failure, a)
	return t, err
}

func toOps(ops []requestOpDoc, a *Access) ([]kv.Op, error) {
	out := make([]kv.Op, 0, len(ops))
	for i := range ops {
		op := &ops[i]
		n := 0
		for _, set := range []bool{op.Put != nil, op.Delete != nil, op.Range != nil, op.Txn != nil} {
			if set {
				n++
			}
		}
		if n != 1 {
			return nil, badRequest("each op must have exactly one of put, delete, range, txn")
		}
		switch {
		case op.Put != nil:
			p := op.Put
			k, err := requireKey(twin{p.Key, p.KeyBase64}, "key")
			if err != nil {
				return nil, err
			}
			v, _, err := twin{p.Value, p.ValueBase64}.get("value")
			if err != nil {
				return nil, err
			}
			out = append(out, kv.Op{Put: &kv.PutRequest{Key: k, Value: v, Lease: p.Lease,
				PrevKV: p.PrevKV, IgnoreValue: p.IgnoreValue, IgnoreLease: p.IgnoreLease}})
			a.Write = append(a.Write, keyrange.Range{Key: k})
			if p.PrevKV {
				a.Read = append(a.Read, keyrange.Range{Key: k})
			}
		case op.Delete != nil:
			d := op.Delete
			sel, err := d.selection()
			if err != nil {
				return nil, err
			}
			out = append(out, kv.Op{Delete: &kv.DeleteRequest{Key: sel.Key, End: sel.End, PrevKV: d.PrevKV}})
			a.Write = append(a.Write, sel)
			if d.PrevKV {
				a.Read = append(a.Read, sel)
			}
		case op.Range != nil:
			rj := op.Range
			sel, err := rj.selection()
			if err != nil {
				return nil, err
			}
			if rj.Limit < 0 || rj.Limit > maxListLimit {
				return nil, badRequest("a range's limit must be between 0 (every key, at most %d) and %d", maxListLimit, maxListLimit)
			}
			o := kv.RangeOptions{Revision: rj.Revision, Limit: rj.Limit, KeysOnly: rj.KeysOnly, CountOnly: rj.CountOnly,
				MinModRevision: rj.MinModRevision, MaxModRevision: rj.MaxModRevision,
				MinCreateRevision: rj.MinCreateRevision, MaxCreateRevision: rj.MaxCreateRevision}
			if rj.SortTarget != "" {
				t, ok := sortTargets[rj.SortTarget]
				if !ok {
					return nil, badRequest("sort_target must be key, version, create, mod or value, not %q", rj.SortTarget)
				}
				o.SortTarget = t
			}
			order, ok := sortOrders[rj.SortOrder]
			if !ok {
				return nil, badRequest("sort_order must be ascend or descend, not %q", rj.SortOrder)
			}
			o.SortOrder = order
			out = append(out, kv.Op{Range: &kv.RangeOp{Key: sel.Key, End: sel.End, Options: o}})
			a.Read = append(a.Read, sel)
		default:
			nested, err := op.Txn.toTxn(a)
			if err != nil {
				return nil, err
			}
			out = append(out, kv.Op{Txn: &nested})
		}
	}
	return out, nil
}
