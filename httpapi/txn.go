package httpapi

import (
	"net/http"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
)

// Wire forms of a txn request. Key-like fields come in a string and a
// base64 form; exactly one of put, delete, range, txn is set per op.
type (
	txnRequestJSON struct {
		Compare []compareJSON `json:"compare"`
		Success []opJSON      `json:"success"`
		Failure []opJSON      `json:"failure"`
	}
	// selectorJSON names a key or a range, as the query parameters of
	// GET /v1/kv do.
	selectorJSON struct {
		Key            *string `json:"key"`
		KeyBase64      *string `json:"key_base64"`
		RangeEnd       *string `json:"range_end"`
		RangeEndBase64 *string `json:"range_end_base64"`
		Prefix         bool    `json:"prefix"`
		FromKey        bool    `json:"from_key"`
	}
	compareJSON struct {
		selectorJSON
		Target         string  `json:"target"`
		Result         string  `json:"result"`
		Value          *string `json:"value"`
		ValueBase64    *string `json:"value_base64"`
		Version        *int64  `json:"version"`
		CreateRevision *int64  `json:"create_revision"`
		ModRevision    *int64  `json:"mod_revision"`
		Lease          *int64  `json:"lease"`
	}
	opJSON struct {
		Put    *putJSON        `json:"put"`
		Delete *rangeSelJSON   `json:"delete"`
		Range  *rangeOpJSON    `json:"range"`
		Txn    *txnRequestJSON `json:"txn"`
	}
	putJSON struct {
		Key         *string `json:"key"`
		KeyBase64   *string `json:"key_base64"`
		Value       *string `json:"value"`
		ValueBase64 *string `json:"value_base64"`
		Lease       int64   `json:"lease"`
		PrevKV      bool    `json:"prev_kv"`
		IgnoreValue bool    `json:"ignore_value"`
		IgnoreLease bool    `json:"ignore_lease"`
	}
	rangeSelJSON struct {
		selectorJSON
		PrevKV bool `json:"prev_kv"`
	}
	rangeOpJSON struct {
		selectorJSON
		Revision          int64  `json:"revision"`
		Limit             int64  `json:"limit"`
		SortTarget        string `json:"sort_target"`
		SortOrder         string `json:"sort_order"`
		KeysOnly          bool   `json:"keys_only"`
		CountOnly         bool   `json:"count_only"`
		MinModRevision    int64  `json:"min_mod_revision"`
		MaxModRevision    int64  `json:"max_mod_revision"`
		MinCreateRevision int64  `json:"min_create_revision"`
		MaxCreateRevision int64  `json:"max_create_revision"`
	}
)

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

// selection resolves key, range_end, prefix and from_key.
func (j *selectorJSON) selection() (keyrange.Range, error) {
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
func (j *txnRequestJSON) toTxn(a *Access) (kv.TxnRequest, error) {
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
		field := map[kv.CompareTarget]string{kv.CompareVersion: "version", kv.CompareCreate: "create_revision",
			kv.CompareMod: "mod_revision", kv.CompareLease: "lease"}[target]
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

func toOps(ops []opJSON, a *Access) ([]kv.Op, error) {
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

// txn serves POST /v1/txn.
//
//	@Summary		Compare, then run the success or the failure ops
//	@Description	Runs the success ops if every compare holds, the failure ops otherwise, atomically: all writes of a txn share one revision. Ops may nest txns. A txn may not write one key twice, and has at most --max-txn-ops ops.
//	@Tags			txn
//	@ID				runTxn
//	@Accept			json
//	@Produce		json
//	@Param			txn	body		txnRequestDoc	true	"The compares and the ops of each branch."
//	@Success		200	{object}	txnResponseDoc	"Which branch ran, and the answer to each of its ops."
//	@Failure		400	{object}	errorDoc		"invalid_argument: malformed JSON, a bad compare or op, a key written twice, too many ops, or ranges whose answer would pass --max-response-bytes or, without a limit, 10000 keys (max_response_bytes or max_keys names the bound; nothing is written); future_revision: a range at a revision above the current one."
//	@Failure		401	{object}	errorDoc		"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403	{object}	errorDoc		"permission_denied: the caller may not read or write every key the txn can touch, nor write every key already attached to a lease a put names."
//	@Failure		404	{object}	errorDoc		"lease_not_found: a put names a lease that does not exist."
//	@Failure		410	{object}	errorDoc		"compacted: a range at a revision below the compact revision."
//	@Failure		413	{object}	errorDoc		"request_too_large: the body is over the server's --max-request-bytes."
//	@Failure		429	{object}	errorDoc		"too_many_requests: more request bytes are in flight than --max-inflight-request-bytes allows; retry later (Retry-After)."
//	@Failure		500	{object}	errorDoc		"internal: an unexpected failure."
//	@Failure		503	{object}	errorDoc		"unavailable: the server is shutting down or its backend failed."
//	@Failure		507	{object}	errorDoc		"no_space: the backend quota is exceeded (NOSPACE alarm)."
//	@Header			200	{integer}	X-Revision		"The store's revision after the txn."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/txn [post]
func (h *Handler) txn(w http.ResponseWriter, r *http.Request) {
	var j txnRequestJSON
	if err := decodeJSON(r, &j); err != nil {
		h.writeError(w, r, err)
		return
	}
	var a Access
	req, err := j.toTxn(&a)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if !h.authorize(w, r, a) {
		return
	}
	limitRanges(&req, h.readLimits())
	res, err := h.cfg.Backend.Txn(r.Context(), req, h.leaseGuard(r))
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	setRevision(w, res.Revision)
	b := appendTxnResult(nil, &res, &req)
	writeRawJSON(w, http.StatusOK, append(b, '\n'))
}

// limitRanges puts every range of t, nested txns' included, under one
// set of limits: together they return at most MaxResponseBytes, and a
// range without a limit at most maxListLimit keys (a larger one fails the
// txn, which then changes nothing).
func limitRanges(t *kv.TxnRequest, l *kv.ReadLimits) {
	for _, ops := range [][]kv.Op{t.Success, t.Failure} {
		for i := range ops {
			switch {
			case ops[i].Range != nil:
				ops[i].Range.Options.Limits = l
			case ops[i].Txn != nil:
				limitRanges(ops[i].Txn, l)
			}
		}
	}
}

// appendTxnResult writes a txn result; req tells which options shaped
// each op's answer.
func appendTxnResult(b []byte, res *kv.TxnResult, req *kv.TxnRequest) []byte {
	b = appendHeader(b, res.Revision)
	b = appendBoolField(b, "succeeded", res.Succeeded)
	b = append(b, `,"responses":[`...)
	ops := req.Success
	if !res.Succeeded {
		ops = req.Failure
	}
	for i, out := range res.Responses {
		if i > 0 {
			b = append(b, ',')
		}
		op := ops[i]
		switch {
		case out.Put != nil:
			b = append(b, `{"put":`...)
			b = appendHeader(b, out.Put.Revision)
			if out.Put.PrevKV != nil {
				b = append(b, `,"prev_kv":`...)
				b = appendKV(b, out.Put.PrevKV, true)
			}
			b = append(b, '}')
		case out.Delete != nil:
			b = append(b, `{"delete":`...)
			b = appendDeleteResult(b, out.Delete, op.Delete.PrevKV)
		case out.Range != nil:
			b = append(b, `{"range":`...)
			b = appendHeader(b, out.Range.Revision)
			b = appendKVs(b, "kvs", out.Range.KVs, !op.Range.Options.KeysOnly)
			b = appendIntField(b, "count", out.Range.Count)
			b = appendBoolField(b, "more", out.Range.More)
			b = append(b, '}')
		case out.Txn != nil:
			b = append(b, `{"txn":`...)
			b = appendTxnResult(b, out.Txn, op.Txn)
		}
		b = append(b, '}')
	}
	return append(b, ']', '}')
}
