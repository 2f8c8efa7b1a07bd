package httpapi

import (
	"net/http"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"

	"github.com/httpkv/httpkv/wire"
)

// restoreRange serves POST /v1/restore.
//
//	@Summary		Restore a range as it was at a past revision
//	@Description	Makes the range hold exactly what it held at revision, at one new revision: puts for the keys changed or deleted since, deletes for the keys created since; restored keys come back without a lease. Nothing changes when nothing differs. The answer is an import's.
//	@Description	With the embedded store it is one write, however many keys it changes. Over etcd it is one etcd txn, which etcd's --max-txn-ops bounds (its ops, and its compares: one per key it updates or deletes, plus one): a larger restore answers 400 naming that limit.
//	@Tags			kv
//	@ID				restoreRange
//	@Accept			json
//	@Produce		json
//	@Param			restore	body		wire.RestoreRequest	true	"The range, the revision to bring back, and dry_run."
//	@Success		200		{object}	wire.RewriteResponse	"What changed (or would change, with dry_run)."
//	@Failure		400		{object}	wire.ErrorResponse			"invalid_argument: malformed JSON, a bad selector, a revision that is not positive, or, over etcd, more changes than --max-txn-ops; future_revision: a revision above the current one."
//	@Failure		401		{object}	wire.ErrorResponse			"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403		{object}	wire.ErrorResponse			"permission_denied: the caller may not read and write every key of the range."
//	@Failure		410		{object}	wire.ErrorResponse			"compacted: the revision is below the compact revision, given as compact_revision."
//	@Failure		413		{object}	wire.ErrorResponse			"request_too_large: the body is over the server's --max-request-bytes."
//	@Failure		429		{object}	wire.ErrorResponse			"too_many_requests: more request bytes are in flight than --max-inflight-request-bytes allows; retry later (Retry-After)."
//	@Failure		500		{object}	wire.ErrorResponse			"internal: an unexpected failure."
//	@Failure		503		{object}	wire.ErrorResponse			"unavailable: the server is shutting down or its backend failed, or, over etcd, the range kept changing while the restore was worked out."
//	@Failure		507		{object}	wire.ErrorResponse			"no_space: the backend quota is exceeded (NOSPACE alarm)."
//	@Header			200		{integer}	X-Revision			"The revision of the changes, or the store's current one."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/restore [post]
func (h *Handler) restoreRange(w http.ResponseWriter, r *http.Request) {
	var req wire.RestoreRequest
	if err := decodeJSON(r, &req); err != nil {
		h.writeError(w, r, err)
		return
	}
	sel, err := req.KeyRange()
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if req.Revision <= 0 {
		h.writeError(w, r, badRequest("revision is required: the revision whose content of the range comes back, at least 1"))
		return
	}
	if !h.authorize(w, r, Access{Read: []keyrange.Range{sel}, Write: []keyrange.Range{sel}}) {
		return
	}
	res, err := h.cfg.Backend.Rewrite(r.Context(), kv.RewriteRequest{Key: sel.Key, End: sel.End, Revision: req.Revision, DryRun: req.DryRun})
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeRewrite(w, &res)
}
