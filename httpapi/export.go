package httpapi

import (
	"bufio"
	"encoding/json"
	"net/http"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"

	"github.com/httpkv/httpkv/wire"
)

// exportParams are the query parameters of GET /v1/export.
var exportParams = wire.ParamsOf(wire.SelectorParams, wire.Params{"revision"})

// ndjsonContentType is the media type of an export and of an import's
// body: one JSON object a line.
const ndjsonContentType = "application/x-ndjson"

// export serves GET /v1/export.
//
//	@Summary		Export a range as NDJSON
//	@Description	Streams every key of the range at one revision, however many, as application/x-ndjson: a first line {"header":{"revision":R},"count":N}, where R is the revision the keys are read at and N how many there are, then one KeyValue a line in key order. POST /v1/import takes the file as it is.
//	@Description	The range is read a page at a time at R, so the server holds one page whatever the range's size. If the compact revision passes R before the last page (a long export of a busy store), the stream ends with a last line {"error":{...}} (code compacted) instead of the keys left: the file is then incomplete, and an import refuses it.
//	@Tags			kv
//	@ID				exportRange
//	@Produce		application/x-ndjson
//	@Param			key					query		string	false	"The key, or the start of the range; none means every key."
//	@Param			key_base64			query		string	false	"The key in standard base64, for bytes that are not UTF-8."	format(byte)
//	@Param			range_end			query		string	false	"The end of the range [key, range_end). At most one of range_end, prefix and from_key."
//	@Param			range_end_base64	query		string	false	"range_end in standard base64."	format(byte)
//	@Param			prefix				query		boolean	false	"Every key with the prefix key (an empty key: every key)."
//	@Param			from_key			query		boolean	false	"Every key >= key."
//	@Param			revision			query		integer	false	"Export the range as it was at this revision; 0 or none exports the current one."	minimum(0)	format(int64)
//	@Success		200					{string}	string	"The header line, then one KeyValue a line."
//	@Failure		400					{object}	wire.ErrorResponse	"invalid_argument: a bad selector or parameter; future_revision: a revision above the current one."
//	@Failure		401					{object}	wire.ErrorResponse	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403					{object}	wire.ErrorResponse	"permission_denied: the caller may not read every key of the range."
//	@Failure		410					{object}	wire.ErrorResponse	"compacted: the revision is below the compact revision."
//	@Failure		500					{object}	wire.ErrorResponse	"internal: an unexpected failure."
//	@Failure		503					{object}	wire.ErrorResponse	"unavailable: the server is shutting down or its backend failed."
//	@Header			200					{integer}	X-Revision	"The revision the keys are read at, as in the header line."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/export [get]
func (h *Handler) export(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r, exportParams)
	sel := q.Selector(false)
	rev := q.Int64("revision", 0)
	if q.Err() != nil {
		h.writeError(w, r, q.Err())
		return
	}
	if !h.authorize(w, r, Access{Read: []keyrange.Range{sel}}) {
		return
	}
	// The count, then the keys, at one revision: the count's, when none
	// was asked for.
	counted, err := h.cfg.Backend.Range(r.Context(), kv.RangeRequest{Key: sel.Key, End: sel.End, Options: kv.RangeOptions{Revision: rev, CountOnly: true}})
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if rev == 0 {
		rev = counted.Revision
	}
	w.Header().Set("Content-Type", ndjsonContentType)
	setRevision(w, rev)
	w.WriteHeader(http.StatusOK)
	// Whole chunks of answerChunk bytes go out, each under its own
	// deadline (deadlines): a client that stops reading is cut off.
	out := bufio.NewWriterSize(w, answerChunk)
	line := wire.AppendHeader(make([]byte, 0, 256), rev)
	line = wire.AppendIntField(line, "count", counted.Count)
	line = append(line, '}', '\n')
	_, err = out.Write(line)
	var n int64
	if err == nil {
		_, err = h.cfg.Backend.Each(r.Context(), sel.Key, sel.End, rev, func(e *kv.KeyValue) error {
			line = append(wire.AppendKV(line[:0], e, true), '\n')
			_, err := out.Write(line)
			n++
			return err
		})
	}
	if err == nil {
		err = out.Flush()
	}
	l := h.log(r).Debug()
	if err != nil {
		l = h.log(r).Warn().AnErr("cause", err)
		if code, _, ok := kv.CodeOf(err); ok && out.Flush() == nil {
			// The answer has begun: the error ends it, as a last line an
			// import refuses.
			_, _ = w.Write(append(appendErrorLine(nil, err), '\n'))
			l = l.Str("code", string(code))
		}
	}
	l.Int64("revision", rev).Int64("keys", n).Msg("export")
}

// appendErrorLine appends err as the contract's error object.
func appendErrorLine(b []byte, err error) []byte {
	ae := toAPIError(err)
	doc := wire.ErrorResponse{Error: wire.ErrorBody{Code: string(ae.code), Message: ae.message}}
	if c, ok := ae.extra["compact_revision"].(int64); ok {
		doc.Error.CompactRevision = c
	}
	j, _ := json.Marshal(doc) // plain strings and numbers: never fails
	return append(b, j...)
}
