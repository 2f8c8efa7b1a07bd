package httpapi

import (
	"net/http"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"

	"github.com/httpkv/httpkv/wire"
)

// historyParams are the query parameters of GET /v1/history.
var historyParams = wire.ParamsOf(wire.SelectorParams, wire.Params{"start_revision", "end_revision", "order", "prev_kv", "filters", "limit", "page_token"})

// history serves GET /v1/history.
//
//	@Summary		What happened to a key or a range, page by page
//	@Description	The events of key alone, [key, range_end), every key with the prefix key (prefix=true), every key >= key (from_key=true), or, with no key, every key, from start_revision to end_revision inclusive: exactly those a watch of the range from start_revision would deliver, in revision order (newest first with order=descend). A delete's kv carries the key and the delete's mod_revision.
//	@Description	A page holds at most limit events, and stops early (with more true) past 4 MiB of keys and values or after reading 100,000 history records, so a page of a sparse range may even be empty: follow next_page_token while more is true. Every page reads the window of the first (its end_revision is pinned), so pages never overlap nor miss an event. A page may end inside a revision.
//	@Description	The compact revision's own events, deletes included, stay readable; a start_revision below it answers 410, and so does a page token once the compaction has passed the event it would read next.
//	@Tags			kv
//	@ID				readHistory
//	@Produce		json
//	@Param			key					query		string				false	"The key, or the start of the range; none means every key."
//	@Param			key_base64			query		string				false	"The key in standard base64, for bytes that are not UTF-8."	format(byte)
//	@Param			range_end			query		string				false	"The end of the range [key, range_end). At most one of range_end, prefix and from_key."
//	@Param			range_end_base64	query		string				false	"range_end in standard base64."	format(byte)
//	@Param			prefix				query		boolean				false	"Every key with the prefix key (an empty key: every key)."
//	@Param			from_key			query		boolean				false	"Every key >= key."
//	@Param			start_revision		query		integer				false	"The first revision; 0 or none: the oldest still held, the compact revision (or 1)."	minimum(0)	format(int64)
//	@Param			end_revision		query		integer				false	"The last revision, inclusive; 0 or none: the current one."	minimum(0)	format(int64)
//	@Param			order				query		string				false	"ascend (oldest first) or descend (newest first)."	Enums(ascend, descend)	default(ascend)
//	@Param			prev_kv				query		boolean				false	"Give each event the key as it was at the revision before, in prev_kv, when it existed and is still held (not for events at the compact revision)."
//	@Param			filters				query		string				false	"A comma list of noput and nodelete: leave those events out."
//	@Param			limit				query		integer				false	"Events per page."	minimum(1)	maximum(10000)	default(1000)	format(int64)
//	@Param			page_token			query		string				false	"next_page_token of the previous page, sent with the same range, order and filters."
//	@Success		200					{object}	wire.HistoryResponse	"One page of the history."
//	@Failure		400					{object}	wire.ErrorResponse			"invalid_argument: a bad selector, parameter or page token, or start_revision after end_revision; future_revision: a revision above the current one."
//	@Failure		401					{object}	wire.ErrorResponse			"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403					{object}	wire.ErrorResponse			"permission_denied: the caller may not read every key of the range."
//	@Failure		410					{object}	wire.ErrorResponse			"compacted: start_revision, or the page token's next event, is below the compact revision."
//	@Failure		429					{object}	wire.ErrorResponse			"too_many_requests: the answers over 64 KiB being built and sent at once would pass --max-held-answer-bytes, or, over etcd, the gateway has --etcd-max-history-watches etcd watches open to read history; retry later."
//	@Failure		500					{object}	wire.ErrorResponse			"internal: an unexpected failure."
//	@Failure		503					{object}	wire.ErrorResponse			"unavailable: the server is shutting down or its backend failed."
//	@Header			200					{integer}	X-Revision			"The store's revision when the request was served."
//	@Header			401					{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Security		AccessToken
//	@Router			/v1/history [get]
func (h *Handler) history(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r, historyParams)
	sel := q.Selector(false)
	req := h.historyRequest(q, sel)
	if q.Err() != nil {
		h.writeError(w, r, q.Err())
		return
	}
	if !h.authorize(w, r, Access{Read: []keyrange.Range{sel}}) {
		return
	}
	page, err := h.cfg.Backend.History(r.Context(), req)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	setRevision(w, page.Revision)
	b := wire.AppendHeader(nil, page.Revision)
	b = wire.AppendIntField(b, "compact_revision", page.CompactRevision)
	b = append(b, `,"events":[`...)
	for i := range page.Events {
		if i > 0 {
			b = append(b, ',')
		}
		b = wire.AppendEvent(b, &page.Events[i])
	}
	b = append(b, ']')
	b = wire.AppendBoolField(b, "more", page.More)
	if page.More {
		next := wire.HistoryToken{
			Start: page.StartRevision, End: page.EndRevision, Next: page.Next,
			Descend: req.Descend, NoPut: req.NoPut, NoDelete: req.NoDelete,
		}
		b = append(b, `,"next_page_token":"`...)
		b = append(b, h.tokens.SealHistory(next, sel)...)
		b = append(b, '"')
	}
	writeRawJSON(w, http.StatusOK, append(b, '}', '\n'))
}

// historyRequest reads the query of GET /v1/history over the range sel.
// A page token must come with the range, order and filters it was issued
// for, and with no other window: it carries where to go on, they do not.
func (h *Handler) historyRequest(q *wire.Query, sel keyrange.Range) kv.HistoryRequest {
	req := kv.HistoryRequest{
		Key:           sel.Key,
		End:           sel.End,
		StartRevision: q.Int64("start_revision", 0),
		EndRevision:   q.Int64("end_revision", 0),
		PrevKV:        q.Bool("prev_kv"),
		Limit:         int(q.Int64("limit", defaultListLimit)),
	}
	if q.Has("limit") && (req.Limit < 1 || req.Limit > wire.MaxListLimit) {
		q.Failf("limit must be between 1 and %d", wire.MaxListLimit)
	}
	req.NoPut, req.NoDelete = q.Filters()
	switch order := q.Get("order"); order {
	case "", "ascend":
	case "descend":
		req.Descend = true
	default:
		q.Failf("order must be ascend or descend, not %q", order)
	}
	s := q.Get("page_token")
	if s == "" || q.Err() != nil {
		return req
	}
	tok, ok := h.tokens.OpenHistory(s, sel)
	switch {
	case !ok:
		q.Failf("page_token is not a token of this range")
	case tok.Descend != req.Descend:
		q.Failf("page_token was issued for the other order")
	case tok.NoPut != req.NoPut || tok.NoDelete != req.NoDelete:
		q.Failf("page_token was issued for other filters")
	case req.StartRevision != 0 && req.StartRevision != tok.Start,
		req.EndRevision != 0 && req.EndRevision != tok.End:
		q.Failf("page_token is pinned to revisions %d to %d", tok.Start, tok.End)
	}
	req.StartRevision, req.EndRevision, req.Resume = tok.Start, tok.End, tok.Next
	return req
}
