package wire

import (
	"github.com/httpkv/httpkv/auth"
	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
)

// The body of POST /v1/txn, declared once: the handler decodes into these
// types (which reject any other field) and swag documents them. Key-like
// fields come as a string or its *_base64 twin, pointers so that an empty
// string differs from an absent field; exactly one of put, delete, range
// and txn is set per op.

// TxnRequest is the body of POST /v1/txn.
type TxnRequest struct {
	// Conditions, all of which must hold for success to run; none means success runs.
	Compare []Compare `json:"compare,omitempty"`
	// Ops run when every compare holds.
	Success []RequestOp `json:"success,omitempty"`
	// Ops run otherwise.
	Failure []RequestOp `json:"failure,omitempty"`
} // @name TxnRequest

// Compare is one condition of a txn.
type Compare struct {
	Selector
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

// RequestOp is one op of a txn branch: exactly one field is set.
type RequestOp struct {
	Put    *PutOp      `json:"put,omitempty"`
	Delete *DeleteOp   `json:"delete,omitempty"`
	Range  *RangeOp    `json:"range,omitempty"`
	Txn    *TxnRequest `json:"txn,omitempty"`
} // @name RequestOp

// PutOp is a put in a txn.
type PutOp struct {
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

// DeleteOp is a delete in a txn.
type DeleteOp struct {
	Selector
	// Answer with the deleted keys.
	PrevKV bool `json:"prev_kv,omitempty"`
} // @name DeleteOp

// RangeOp is a read in a txn, with the options of GET /v1/kv but pages.
type RangeOp struct {
	Selector
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
type Selector struct {
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

// KeyRange resolves key, range_end, prefix and from_key.
func (j Selector) KeyRange() (keyrange.Range, error) {
	prefix, fromKey := j.Prefix, j.FromKey
	k, err := RequireKey("key", j.Key, j.KeyBase64)
	if err != nil {
		return keyrange.Range{}, err
	}
	e, hasEnd, err := Twin("range_end", j.RangeEnd, j.RangeEndBase64)
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

// Txn converts the wire txn to the store's, and adds the keys it reads
// and writes to need, which authorization decides on.
func (j *TxnRequest) Txn(need *auth.Need) (kv.TxnRequest, error) {
	var t kv.TxnRequest
	for i := range j.Compare {
		c := &j.Compare[i]
		sel, err := c.KeyRange()
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
			v, set, err := Twin("value", c.Value, c.ValueBase64)
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
		need.Read = append(need.Read, sel)
	}
	var err error
	if t.Success, err = toOps(j.Success, need); err != nil {
		return t, err
	}
	t.Failure, err = toOps(j.Failure, need)
	return t, err
}

func toOps(ops []RequestOp, a *auth.Need) ([]kv.Op, error) {
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
			k, err := RequireKey("key", p.Key, p.KeyBase64)
			if err != nil {
				return nil, err
			}
			v, _, err := Twin("value", p.Value, p.ValueBase64)
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
			sel, err := d.KeyRange()
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
			sel, err := rj.KeyRange()
			if err != nil {
				return nil, err
			}
			if rj.Limit < 0 || rj.Limit > MaxListLimit {
				return nil, badRequest("a range's limit must be between 0 (every key, at most %d) and %d", MaxListLimit, MaxListLimit)
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
			nested, err := op.Txn.Txn(a)
			if err != nil {
				return nil, err
			}
			out = append(out, kv.Op{Txn: &nested})
		}
	}
	return out, nil
}
