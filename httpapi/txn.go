package httpapi

import (
	"net/http"

	"github.com/httpkv/httpkv/kv"

	"github.com/httpkv/httpkv/wire"
)

// txn serves POST /v1/txn.
//
//	@Summary		Compare, then run the success or the failure ops
//	@Description	Runs the success ops if every compare holds, the failure ops otherwise, atomically: all writes of a txn share one revision. Ops may nest txns. A txn may not write one key twice, and has at most --max-txn-ops ops.
//	@Tags			txn
//	@ID				runTxn
//	@Accept			json
//	@Produce		json
//	@Param			txn	body		wire.TxnRequest	true	"The compares and the ops of each branch."
//	@Success		200	{object}	wire.TxnResponse	"Which branch ran, and the answer to each of its ops."
//	@Failure		400	{object}	wire.ErrorResponse		"invalid_argument: malformed JSON, a bad compare or op, a key written twice, too many ops, or ranges whose answer would pass --max-response-bytes or, without a limit, 10000 keys (max_response_bytes or max_keys names the bound; nothing is written); future_revision: a range at a revision above the current one."
//	@Failure		401	{object}	wire.ErrorResponse		"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403	{object}	wire.ErrorResponse		"permission_denied: the caller may not read or write every key the txn can touch, nor write every key already attached to a lease a put names."
//	@Failure		404	{object}	wire.ErrorResponse		"lease_not_found: a put names a lease that does not exist."
//	@Failure		410	{object}	wire.ErrorResponse		"compacted: a range at a revision below the compact revision."
//	@Failure		413	{object}	wire.ErrorResponse		"request_too_large: the body is over the server's --max-request-bytes."
//	@Failure		429	{object}	wire.ErrorResponse		"too_many_requests: more request bytes are in flight than --max-inflight-request-bytes allows, or the answers over 64 KiB being built and sent at once would pass --max-held-answer-bytes; retry later (Retry-After)."
//	@Failure		500	{object}	wire.ErrorResponse		"internal: an unexpected failure."
//	@Failure		503	{object}	wire.ErrorResponse		"unavailable: the server is shutting down or its backend failed."
//	@Failure		507	{object}	wire.ErrorResponse		"no_space: the backend quota is exceeded (NOSPACE alarm)."
//	@Header			200	{integer}	X-Revision		"The store's revision after the txn."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/txn [post]
func (h *Handler) txn(w http.ResponseWriter, r *http.Request) {
	var j wire.TxnRequest
	if err := decodeJSON(r, &j); err != nil {
		h.writeError(w, r, err)
		return
	}
	var a Access
	req, err := j.Txn(&a)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if !h.authorize(w, r, a) {
		return
	}
	limitRanges(&req, h.readLimits(w))
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
// range without a limit at most wire.MaxListLimit keys (a larger one fails the
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
	b = wire.AppendHeader(b, res.Revision)
	b = wire.AppendBoolField(b, "succeeded", res.Succeeded)
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
			b = wire.AppendHeader(b, out.Put.Revision)
			if out.Put.PrevKV != nil {
				b = append(b, `,"prev_kv":`...)
				b = wire.AppendKV(b, out.Put.PrevKV, true)
			}
			b = append(b, '}')
		case out.Delete != nil:
			b = append(b, `{"delete":`...)
			b = appendDeleteResult(b, out.Delete, op.Delete.PrevKV)
		case out.Range != nil:
			b = append(b, `{"range":`...)
			b = wire.AppendHeader(b, out.Range.Revision)
			b = wire.AppendKVs(b, "kvs", out.Range.KVs, !op.Range.Options.KeysOnly)
			b = wire.AppendIntField(b, "count", out.Range.Count)
			b = wire.AppendBoolField(b, "more", out.Range.More)
			b = append(b, '}')
		case out.Txn != nil:
			b = append(b, `{"txn":`...)
			b = appendTxnResult(b, out.Txn, op.Txn)
		}
		b = append(b, '}')
	}
	return append(b, ']', '}')
}
