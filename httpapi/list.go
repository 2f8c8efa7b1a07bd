package httpapi

import (
	"bytes"
	"context"
	"net/http"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"

	"github.com/httpkv/httpkv/wire"
)

// listParams are the query parameters of GET /v1/kv.
var listParams = wire.ParamsOf(wire.SelectorParams, wire.RangeOptionParams, wire.Params{"limit", "page_token"})

// listKeys serves GET /v1/kv.
//
//	@Summary		Range over keys, with pagination
//	@Description	Lists key alone, [key, range_end), every key with the prefix key (prefix=true), every key >= key (from_key=true), or, with no key, every key.
//	@Description	A page holds at most limit keys. When more is true and the order is key-ascending, next_page_token reads the next page at the same revision as the first (a consistent snapshot across pages); once the compact revision passes that revision the token answers 410.
//	@Tags			kv
//	@ID				listKeys
//	@Produce		json
//	@Param			key					query		string			false	"The key, or the start of the range; none means every key."
//	@Param			key_base64			query		string			false	"The key in standard base64, for bytes that are not UTF-8."	format(byte)
//	@Param			range_end			query		string			false	"The end of the range [key, range_end). At most one of range_end, prefix and from_key."
//	@Param			range_end_base64	query		string			false	"range_end in standard base64."	format(byte)
//	@Param			prefix				query		boolean			false	"Every key with the prefix key (an empty key: every key)."
//	@Param			from_key			query		boolean			false	"Every key >= key."
//	@Param			revision			query		integer			false	"Read at this revision; 0 or none reads the current one."	minimum(0)	format(int64)
//	@Param			limit				query		integer			false	"Keys per page."	minimum(1)	maximum(10000)	default(1000)	format(int64)
//	@Param			page_token			query		string			false	"next_page_token of the previous page of the same list: the same range and revision filters. Tokens are sealed by the server; one it did not issue for this list, or on a single key, answers 400."
//	@Param			sort_target			query		string			false	"What to sort by; key by default."	Enums(key, version, create, mod, value)
//	@Param			sort_order			query		string			false	"Sort order; none (ascending keys) by default."	Enums(none, ascend, descend)
//	@Param			keys_only			query		boolean			false	"Leave the values out."
//	@Param			count_only			query		boolean			false	"Only count: kvs is empty."
//	@Param			min_mod_revision	query		integer			false	"Only keys last modified at or after this revision."	minimum(0)	format(int64)
//	@Param			max_mod_revision	query		integer			false	"Only keys last modified at or before this revision."	minimum(0)	format(int64)
//	@Param			min_create_revision	query		integer			false	"Only keys created at or after this revision."	minimum(0)	format(int64)
//	@Param			max_create_revision	query		integer			false	"Only keys created at or before this revision."	minimum(0)	format(int64)
//	@Success		200					{object}	wire.ListResponse	"One page of the range."
//	@Failure		400					{object}	wire.ErrorResponse		"invalid_argument: a bad selector, parameter or page token, or a page whose keys and values would pass --max-response-bytes (max_response_bytes names it: ask for fewer keys); future_revision: a revision above the current one."
//	@Failure		401					{object}	wire.ErrorResponse		"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403					{object}	wire.ErrorResponse		"permission_denied: the caller may not read every key of the range."
//	@Failure		410					{object}	wire.ErrorResponse		"compacted: the revision, or the page token's, is below the compact revision."
//	@Failure		429					{object}	wire.ErrorResponse		"too_many_requests: the answers over 64 KiB being built and sent at once would pass --max-held-answer-bytes; retry later (Retry-After)."
//	@Failure		500					{object}	wire.ErrorResponse		"internal: an unexpected failure."
//	@Failure		503					{object}	wire.ErrorResponse		"unavailable: the server is shutting down or its backend failed."
//	@Header			200					{integer}	X-Revision		"The store's revision when the request was served."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/kv [get]
func (h *Handler) listKeys(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r, listParams)
	sel := q.Selector(false)
	opts := q.RangeOptions()
	opts.Limit = q.Int64("limit", defaultListLimit)
	if q.Has("limit") && (opts.Limit < 1 || opts.Limit > wire.MaxListLimit) {
		q.Failf("limit must be between 1 and %d", wire.MaxListLimit)
	}
	var page wire.ListPage
	if s := q.Get("page_token"); s != "" && q.Err() == nil {
		page = h.tokens.OpenListPage(q, s, sel, opts)
		opts.Revision = page.Rev
	}
	if q.Err() != nil {
		h.writeError(w, r, q.Err())
		return
	}
	if !h.authorize(w, r, Access{Read: []keyrange.Range{sel}}) {
		return
	}
	opts.Limits = h.readLimits(w)
	b, rev, err := h.listPage(r.Context(), sel, opts, page.Start)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	// The read transaction has ended: a client slow to take the answer
	// holds nothing of the store.
	setRevision(w, rev)
	writeRawJSON(w, http.StatusOK, b)
	// Write has returned: the server has copied or sent the answer.
	putAnswerBuf(b)
}

// listPage reads one page of sel, from start when a token gave one, and
// encodes the answer, with the revision it was served at. The answer is
// encoded inside the backend's read, from keys and values that may alias
// the store; the read has ended before it returns.
func (h *Handler) listPage(ctx context.Context, sel keyrange.Range, opts kv.RangeOptions, start []byte) ([]byte, int64, error) {
	var b []byte
	var rev int64
	// Count is the whole range's, not what is left of it from start.
	err := h.cfg.Backend.ViewRange(ctx, kv.RangeRequest{Key: sel.Key, End: sel.End, Options: opts, From: start}, func(res *kv.RangeResult) error {
		rev = res.Revision
		b = h.appendListPage(getAnswerBuf(), res, sel, opts)
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return b, rev, nil
}

// appendListPage appends the ListResponse of res, a page of sel.
func (h *Handler) appendListPage(b []byte, res *kv.RangeResult, sel keyrange.Range, opts kv.RangeOptions) []byte {
	b = wire.AppendHeader(b, res.Revision)
	b = wire.AppendKVs(b, "kvs", res.KVs, !opts.KeysOnly)
	b = wire.AppendIntField(b, "count", res.Count)
	b = wire.AppendBoolField(b, "more", res.More)
	if res.More && opts.KeyAscending() && len(res.KVs) > 0 {
		readAt := opts.Revision
		if readAt == 0 {
			readAt = res.Revision
		}
		last := res.KVs[len(res.KVs)-1].Key
		next := wire.ListPage{Rev: readAt, Start: append(bytes.Clone(last), 0), Binding: wire.ListBinding(sel, opts)}
		b = append(b, `,"next_page_token":"`...)
		b = append(b, h.tokens.SealListPage(next)...)
		b = append(b, '"')
	}
	return append(b, '}', '\n')
}

// readLimits returns the bounds of one answer's ranges: at most
// wire.MaxListLimit keys for a range without a limit (a txn's), and
// MaxResponseBytes of keys and values in all; and what they copy counts
// against --max-held-answer-bytes with the answers being sent.
func (h *Handler) readLimits(w http.ResponseWriter) *kv.ReadLimits {
	return &kv.ReadLimits{MaxKeys: wire.MaxListLimit, MaxBytes: h.cfg.MaxResponseBytes, Hold: holdBuilding(w)}
}
