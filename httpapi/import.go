package httpapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/reconcile"

	"github.com/httpkv/httpkv/wire"
)

// importParams are the query parameters of POST /v1/import.
var importParams = wire.ParamsOf(wire.SelectorParams, wire.Params{"mode", "dry_run"})

// minImportRate is the slowest an import's body may arrive, after the
// bodyReadTimeout every body has: 64 MiB, the default largest import,
// in about four minutes and a half.
const minImportRate = 256 << 10

// importLineDoc is what an import reads of a line; other fields (an
// export's revisions, versions and leases) are ignored.
type importLineDoc struct {
	Header      json.RawMessage `json:"header"`
	Key         *string         `json:"key"`
	KeyBase64   *string         `json:"key_base64"`
	Value       *string         `json:"value"`
	ValueBase64 *string         `json:"value_base64"`
}

// limitImportBody bounds an import's body as limitBody bounds others,
// with MaxImportBytes: one body to it (413 past it), and all the imports
// being received or applied at once to it too (429 past it). An import
// counts for its Content-Length, or MaxImportBytes without one, until its
// handler returns; its entries, which it holds that long, take no more
// than twice its body (a buffer that doubles as it fills) and 24 bytes a
// key.
func (h *Handler) limitImportBody(next http.Handler) http.Handler {
	return h.boundBodies(next, h.cfg.MaxImportBytes, h.imports, importTooLarge,
		"too many import bytes are in flight (--max-import-bytes, for all imports at once): retry later")
}

func importTooLarge(limit int64) *apiError {
	return errorf(codeRequestTooLarge, "the import is larger than %d bytes: import a narrower range at a time, or raise the server's --max-import-bytes", limit)
}

// importRange serves POST /v1/import.
//
//	@Summary		Import NDJSON into a range
//	@Description	Makes the range hold what the body says, at one new revision: one object a line with key or key_base64 and value or value_base64 (other fields, and a first line with header, are ignored: an export imports as it is). Every key must lie in the range the query names (none: every key), and appear once.
//	@Description	mode=merge (the default) puts the keys whose value differs or that are missing; mode=replace also deletes the keys of the range the body lacks. Keys put have no lease; a key that already holds its value is left as it is. Nothing changes when nothing differs, and nothing changes when any line is wrong.
//	@Description	With the embedded store the import is one write, however many keys it changes. Over etcd it is one etcd txn, which etcd's --max-txn-ops bounds (its ops, and its compares: one per key it updates or deletes, plus one; with If-Match, one per key of the range): a larger import answers 400 naming that limit.
//	@Tags			kv
//	@ID				importRange
//	@Accept			application/x-ndjson
//	@Produce		json
//	@Param			body				body		string				true	"One JSON object a line."
//	@Param			key					query		string				false	"The key, or the start of the range; none means every key."
//	@Param			key_base64			query		string				false	"The key in standard base64, for bytes that are not UTF-8."	format(byte)
//	@Param			range_end			query		string				false	"The end of the range [key, range_end). At most one of range_end, prefix and from_key."
//	@Param			range_end_base64	query		string				false	"range_end in standard base64."	format(byte)
//	@Param			prefix				query		boolean				false	"Every key with the prefix key (an empty key: every key)."
//	@Param			from_key			query		boolean				false	"Every key >= key."
//	@Param			mode				query		string				false	"merge: put what differs; replace: also delete the range's keys the body lacks."	Enums(merge, replace)	default(merge)
//	@Param			dry_run				query		boolean				false	"Change nothing: answer what would change."
//	@Param			If-Match			header		string				false	"A revision in double quotes (an export's header revision): import only if no key of the range was written or deleted after it."
//	@Success		200					{object}	wire.RewriteResponse	"What changed (or would change, with dry_run)."
//	@Failure		400					{object}	wire.ErrorResponse			"invalid_argument: a bad selector or parameter, a line that is not a JSON object or lacks its key or value, a key outside the range or given twice (the message names the line), or, over etcd, more changes than --max-txn-ops; future_revision: an If-Match revision above the current one."
//	@Failure		401					{object}	wire.ErrorResponse			"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403					{object}	wire.ErrorResponse			"permission_denied: the caller may not write every key of the range (nor read them, with dry_run)."
//	@Failure		410					{object}	wire.ErrorResponse			"compacted: the If-Match revision is below the compact revision: whether the range changed since is no longer known."
//	@Failure		412					{object}	wire.ErrorResponse			"precondition_failed: a key of the range was written or deleted after the If-Match revision."
//	@Failure		413					{object}	wire.ErrorResponse			"request_too_large: the body is over the server's --max-import-bytes."
//	@Failure		429					{object}	wire.ErrorResponse			"too_many_requests: the imports in flight hold --max-import-bytes already; retry later (Retry-After)."
//	@Failure		500					{object}	wire.ErrorResponse			"internal: an unexpected failure."
//	@Failure		503					{object}	wire.ErrorResponse			"unavailable: the server is shutting down or its backend failed, or, over etcd, the range kept changing while the import was worked out."
//	@Failure		507					{object}	wire.ErrorResponse			"no_space: the backend quota is exceeded (NOSPACE alarm)."
//	@Header			200,412				{integer}	X-Revision			"The revision of the changes, or the store's current one."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/import [post]
func (h *Handler) importRange(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r, importParams)
	scope := q.Selector(false)
	replace := false
	switch m := q.Get("mode"); m {
	case "", "merge":
	case "replace":
		replace = true
	default:
		q.Failf("mode must be merge or replace, not %q", m)
	}
	dryRun := q.Bool("dry_run")
	if q.Err() != nil {
		h.writeError(w, r, q.Err())
		return
	}
	since, aerr := parseRevisionMatch(r)
	if aerr != nil {
		h.writeError(w, r, aerr)
		return
	}
	access := Access{Write: []keyrange.Range{scope}}
	if dryRun {
		access.Read = access.Write
	}
	if !h.authorize(w, r, access) {
		return
	}
	// The body may take longer than others to arrive: bodyReadTimeout,
	// and minImportRate for its size.
	size := r.ContentLength
	if size < 0 {
		size = h.cfg.MaxImportBytes
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(bodyReadTimeout + time.Duration(size/minImportRate)*time.Second))
	entries, err := readImport(r.Body, scope)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		err = importTooLarge(mbe.Limit)
	}
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	res, err := h.cfg.Backend.Rewrite(r.Context(), kv.RewriteRequest{
		Key: scope.Key, End: scope.End, Entries: entries,
		Replace: replace, DryRun: dryRun, UnchangedSince: since,
	})
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeRewrite(w, &res)
}

// parseRevisionMatch reads an import's If-Match: a revision in double
// quotes, or none (0).
func parseRevisionMatch(r *http.Request) (int64, *apiError) {
	if r.Header.Get("If-None-Match") != "" {
		return 0, badRequest("an import takes If-Match only, not If-None-Match")
	}
	v := strings.TrimSpace(r.Header.Get("If-Match"))
	if v == "" {
		return 0, nil
	}
	t := strings.TrimPrefix(v, "W/")
	if len(t) >= 2 && t[0] == '"' && t[len(t)-1] == '"' {
		if rev, err := strconv.ParseInt(t[1:len(t)-1], 10, 64); err == nil && rev > 0 {
			return rev, nil
		}
	}
	return 0, badRequest(`If-Match of an import must be a revision in double quotes, such as "\"42\"" (the header revision of an export), not %s`, v)
}

// readImport reads the lines of an import's body into entries of scope.
// A line that is wrong fails the import, naming it. (The entries grow as
// they come: an export's lines carry revisions and leases that the
// entries do not keep, so the body's size would overstate them.)
func readImport(body io.Reader, scope keyrange.Range) (*reconcile.Entries, error) {
	b := reconcile.NewBuilder(scope)
	br := bufio.NewReaderSize(body, 64<<10)
	var line []byte
	first := true
	for n := 1; ; n++ {
		var err error
		line, err = readLine(br, line[:0])
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, bodyError(err)
		}
		if trimmed := bytes.TrimSpace(line); len(trimmed) > 0 {
			if err := addLine(b, trimmed, n, first); err != nil {
				return nil, err
			}
			first = false
		}
		if errors.Is(err, io.EOF) {
			return b.Finish()
		}
	}
}

// readLine appends the next line of br, without its newline, to buf; at
// the end of the body it returns the last line with io.EOF.
func readLine(br *bufio.Reader, buf []byte) ([]byte, error) {
	for {
		chunk, err := br.ReadSlice('\n')
		buf = append(buf, chunk...)
		switch {
		case err == nil:
			return buf[:len(buf)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		}
		return buf, err
	}
}

// addLine adds the entry of one line; first says whether it is the first
// line that is not blank, which may be an export's header instead.
func addLine(b *reconcile.Builder, line []byte, n int, first bool) error {
	var l importLineDoc
	if err := json.Unmarshal(line, &l); err != nil || line[0] != '{' {
		return badRequest("line %d: not a JSON object with key and value: %s", n, lineError(err))
	}
	// Strings that are not UTF-8, which encoding/json would have changed,
	// and a field given twice: checked on JSON that decoded.
	if err := wire.CheckText(line); err != nil {
		return badRequest("line %d: %s", n, err.Error())
	}
	if first && l.Header != nil && l.Key == nil && l.KeyBase64 == nil {
		return nil
	}
	key, set, err := wire.Twin("key", l.Key, l.KeyBase64)
	if err == nil && !set {
		err = badRequest("no key: give key, or key_base64 for bytes that are not UTF-8")
	}
	if err != nil {
		return badRequest("line %d: %s", n, err.Error())
	}
	value, set, err := wire.Twin("value", l.Value, l.ValueBase64)
	if err == nil && !set {
		err = badRequest("no value: give value, or value_base64 for bytes that are not UTF-8")
	}
	if err != nil {
		return badRequest("line %d: %s", n, err.Error())
	}
	return b.Add(key, value, n)
}

// lineError says what is wrong with a line encoding/json refused.
func lineError(err error) string {
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return "it is not an object"
	case errors.As(err, &te) && te.Field == "":
		return "it is " + te.Value
	case errors.As(err, &te):
		return "field " + strconv.Quote(te.Field) + " must be a string, not " + te.Value
	}
	return err.Error()
}
