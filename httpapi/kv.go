package httpapi

import (
	"errors"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"

	"github.com/httpkv/httpkv/wire"
)

// defaultListLimit is the page size of a list or a history read that
// gives no limit.
const defaultListLimit = 1000

// pathKey returns the key of /v1/kv/{key}: everything after the prefix of
// the escaped path, percent-decoded, so "a%2Fb" is the key "a/b" and
// "a//b" keeps both slashes.
func pathKey(r *http.Request) ([]byte, *apiError) {
	const prefix = "/v1/kv/"
	raw := r.URL.EscapedPath()
	if !strings.HasPrefix(raw, prefix) {
		return nil, badRequest("no key in path")
	}
	key, err := url.PathUnescape(raw[len(prefix):])
	if err != nil {
		return nil, badRequest("key is not a valid escaped path: %v", err)
	}
	if key == "" {
		return nil, badRequest("key must not be empty")
	}
	return []byte(key), nil
}

// setRevision sets the X-Revision header.
func setRevision(w http.ResponseWriter, rev int64) {
	w.Header().Set("X-Revision", strconv.FormatInt(rev, 10))
}

func etag(modRev int64) string { return `"` + strconv.FormatInt(modRev, 10) + `"` }

// getKeyParams are the query parameters of GET /v1/kv/{key}.
var getKeyParams = wire.Params{"revision", "raw"}

// getKey serves GET /v1/kv/{key}.
//
//	@Summary		Read one key
//	@Description	Reads the key at the current revision, or at a past one. With raw=true the body is the value's bytes alone (application/octet-stream) and the metadata comes in the X-* headers.
//	@Description	The ETag is the key's mod revision, for If-Match on a later put or delete; If-None-Match with it (or *) answers 304 while the key is unchanged.
//	@Tags			kv
//	@ID				getKey
//	@Produce		json,octet-stream
//	@Param			key				path		string			true	"The key: everything after /v1/kv/, percent-decoded from the escaped path (a%2Fb is the key a/b; slashes in the path are part of the key). Not empty."
//	@Param			revision		query		integer			false	"Read the key as it was at this revision; 0 or none reads the current one. Reading exactly at the compact revision works."	minimum(0)	format(int64)
//	@Param			raw				query		boolean			false	"Answer the value's bytes alone (application/octet-stream). Booleans accept true, false, 1 and 0."
//	@Param			If-None-Match	header		string			false	"Entity tags, or *: answer 304 when the key's ETag is among them."
//	@Success		200				{object}	wire.GetResponse	"The key. With raw=true, the value's bytes instead (application/octet-stream)."
//	@Success		304				"The key is unchanged: its ETag matches If-None-Match."
//	@Failure		400				{object}	wire.ErrorResponse	"invalid_argument: an empty key or a bad parameter; future_revision: a revision above the current one."
//	@Failure		401				{object}	wire.ErrorResponse	"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403				{object}	wire.ErrorResponse	"permission_denied: the caller may not read the key."
//	@Failure		404				{object}	wire.ErrorResponse	"key_not_found, with the store's revision."
//	@Failure		410				{object}	wire.ErrorResponse	"compacted: the revision is below the compact revision, given as compact_revision."
//	@Failure		429				{object}	wire.ErrorResponse	"too_many_requests: the answers over 64 KiB being built and sent at once would pass --max-held-answer-bytes; retry later (Retry-After)."
//	@Failure		500				{object}	wire.ErrorResponse	"internal: an unexpected failure."
//	@Failure		503				{object}	wire.ErrorResponse	"unavailable: the server is shutting down or its backend failed."
//	@Header			200,304,404		{integer}	X-Revision			"The store's revision when the request was served."
//	@Header			200,304			{string}	ETag				"The key's mod revision, quoted: a strong entity tag."
//	@Header			200				{integer}	X-Create-Revision	"With raw=true: the key's create_revision."
//	@Header			200				{integer}	X-Version			"With raw=true: the key's version."
//	@Header			200				{integer}	X-Lease				"With raw=true: the key's lease, 0 when none."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/kv/{key} [get]
func (h *Handler) getKey(w http.ResponseWriter, r *http.Request) {
	key, aerr := pathKey(r)
	if aerr != nil {
		h.writeError(w, r, aerr)
		return
	}
	q := newQuery(r, getKeyParams)
	rev := q.Int64("revision", 0)
	raw := q.Bool("raw")
	if q.Err() != nil {
		h.writeError(w, r, q.Err())
		return
	}
	if !h.authorize(w, r, Access{Read: []keyrange.Range{{Key: key}}}) {
		return
	}
	res, err := h.cfg.Backend.Range(r.Context(), kv.RangeRequest{Key: key, Options: kv.RangeOptions{Revision: rev}})
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	setRevision(w, res.Revision)
	if len(res.KVs) == 0 {
		h.writeError(w, r, errorf(kv.CodeKeyNotFound, "the key %q does not exist", key).with("revision", res.Revision))
		return
	}
	cur := &res.KVs[0]
	tag := etag(cur.ModRevision)
	w.Header().Set("ETag", tag)
	if inm := r.Header.Get("If-None-Match"); inm != "" && (inm == "*" || matchETag(inm, cur.ModRevision)) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if raw {
		hd := w.Header()
		hd.Set("Content-Type", "application/octet-stream")
		hd.Set("X-Create-Revision", strconv.FormatInt(cur.CreateRevision, 10))
		hd.Set("X-Version", strconv.FormatInt(cur.Version, 10))
		hd.Set("X-Lease", strconv.FormatInt(cur.Lease, 10))
		hd.Set("Content-Length", strconv.Itoa(len(cur.Value)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(cur.Value)
		return
	}
	b := wire.AppendHeader(make([]byte, 0, 64+wire.KVsSize(res.KVs[:1], true)), res.Revision)
	b = append(b, `,"kv":`...)
	b = wire.AppendKV(b, cur, true)
	writeRawJSON(w, http.StatusOK, append(b, '}', '\n'))
}

// jsonKV lets encoding/json write a KeyValue with its base64 twins.
type jsonKV struct {
	kv        *kv.KeyValue
	withValue bool
}

func (j jsonKV) MarshalJSON() ([]byte, error) { return wire.AppendKV(nil, j.kv, j.withValue), nil }

// putKeyParams are the query parameters of PUT /v1/kv/{key}.
var putKeyParams = wire.Params{"lease", "ttl", "prev_kv", "ignore_value", "ignore_lease"}

// putKey serves PUT /v1/kv/{key}: the body is the value.
//
//	@Summary		Put a key
//	@Description	Writes the request body, whatever its content type, byte for byte as the key's value, at a new revision.
//	@Description	If-Match with the key's ETag (its mod revision, quoted) puts only if the key is unchanged, If-Match: * only if it exists, If-None-Match: * only if it does not; a failed condition answers 412 with the key as it is.
//	@Description	With ttl=N the key expires by itself after N seconds unless its lease is kept alive: the lease is granted and attached in this one request, and a put that fails revokes it before answering.
//	@Tags			kv
//	@ID				putKey
//	@Accept			octet-stream
//	@Produce		json
//	@Param			key				path		string			true	"The key: everything after /v1/kv/, percent-decoded from the escaped path (a%2Fb is the key a/b; slashes in the path are part of the key). Not empty."
//	@Param			value			body		string			true	"The value's bytes, whatever the Content-Type."
//	@Param			lease			query		integer			false	"Attach the key to this lease; 0 or none attaches none."	minimum(0)	format(int64)
//	@Param			ttl				query		integer			false	"Seconds (at least 1) before the key expires by itself: it gets a lease of its own, granted for ttl seconds and attached by this put, whose ID the answer carries in lease (keep it alive with POST /v1/leases/{id}/keepalive). The key's previous lease is revoked if it holds no other key. Not with lease or ignore_lease."	minimum(1)	format(int64)
//	@Param			prev_kv			query		boolean			false	"Answer with the key as it was before, in prev_kv."
//	@Param			ignore_value	query		boolean			false	"Keep the current value (the key must exist); the body is ignored."
//	@Param			ignore_lease	query		boolean			false	"Keep the current lease (the key must exist)."
//	@Param			If-Match		header		string			false	"The key's ETag (its mod revision in double quotes), or * for any existing version: put only if it matches."
//	@Param			If-None-Match	header		string			false	"Only *: put only if the key does not exist."
//	@Success		200				{object}	wire.PutResponse	"Written; the header's revision is the put's."
//	@Failure		400				{object}	wire.ErrorResponse		"invalid_argument: an empty key, a bad parameter or condition, a ttl that is not a whole number of seconds of at least 1, ttl with lease or ignore_lease."
//	@Failure		401				{object}	wire.ErrorResponse		"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403				{object}	wire.ErrorResponse		"permission_denied: the caller may not write the key (nor read it, with a condition or prev_kv), or, with a lease, every key already attached to it."
//	@Failure		404				{object}	wire.ErrorResponse		"lease_not_found: the lease does not exist."
//	@Failure		412				{object}	wire.ErrorResponse		"precondition_failed: the condition did not hold; kv is the key as it is, if it exists, and ETag its entity tag."
//	@Failure		413				{object}	wire.ErrorResponse		"request_too_large: the body is over the server's --max-request-bytes."
//	@Failure		429				{object}	wire.ErrorResponse		"too_many_requests: more request bytes are in flight than --max-inflight-request-bytes allows; retry later (Retry-After)."
//	@Failure		500				{object}	wire.ErrorResponse		"internal: an unexpected failure."
//	@Failure		503				{object}	wire.ErrorResponse		"unavailable: the server is shutting down or its backend failed."
//	@Failure		507				{object}	wire.ErrorResponse		"no_space: the backend quota is exceeded (NOSPACE alarm)."
//	@Header			200,412			{integer}	X-Revision	"The store's revision: the put's, or the one the condition was checked at."
//	@Header			200,412			{string}	ETag		"The key's new mod revision, quoted; on 412 the current key's."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/kv/{key} [put]
func (h *Handler) putKey(w http.ResponseWriter, r *http.Request) {
	key, aerr := pathKey(r)
	if aerr != nil {
		h.writeError(w, r, aerr)
		return
	}
	q := newQuery(r, putKeyParams)
	req := kv.PutRequest{
		Key:         key,
		Lease:       q.Int64("lease", 0),
		PrevKV:      q.Bool("prev_kv"),
		IgnoreValue: q.Bool("ignore_value"),
		IgnoreLease: q.Bool("ignore_lease"),
	}
	ttl := q.TTL()
	if q.Err() != nil {
		h.writeError(w, r, q.Err())
		return
	}
	p, aerr := parsePrecondition(r)
	if aerr != nil {
		h.writeError(w, r, aerr)
		return
	}
	// The body is read once the caller may write the key.
	op := kv.Op{Put: &req}
	if !h.authorize(w, r, writeAccess(keyrange.Range{Key: key}, p, op)) {
		return
	}
	value, err := readBody(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	req.Value = value
	if ttl > 0 {
		h.putWithTTL(w, r, &req, p, ttl)
		return
	}
	out, ok := h.writeKey(w, r, keyrange.Range{Key: key}, p, op)
	if !ok {
		return
	}
	res := out.Put
	setRevision(w, res.Revision)
	w.Header().Set("ETag", etag(res.Revision))
	b := wire.AppendHeader(nil, res.Revision)
	if res.PrevKV != nil {
		b = append(b, `,"prev_kv":`...)
		b = wire.AppendKV(b, res.PrevKV, true)
	}
	writeRawJSON(w, http.StatusOK, append(b, '}', '\n'))
}

// bodyError keeps a too-large body's error and reports others as bad input.
func bodyError(err error) error {
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return err
	case errors.Is(err, os.ErrDeadlineExceeded):
		return badRequest("the request body did not arrive within %v", bodyReadTimeout)
	}
	return badRequest("reading the request body: %v", err)
}

// deleteKeyParams are the query parameters of DELETE /v1/kv/{key}.
var deleteKeyParams = wire.Params{"prev_kv"}

// deleteKey serves DELETE /v1/kv/{key}.
//
//	@Summary		Delete a key
//	@Description	Deletes the key. Deleting a key that does not exist answers deleted 0 and makes no revision. If-Match with the key's ETag, or *, deletes only if it matches.
//	@Tags			kv
//	@ID				deleteKey
//	@Produce		json
//	@Param			key			path		string				true	"The key: everything after /v1/kv/, percent-decoded from the escaped path (a%2Fb is the key a/b; slashes in the path are part of the key). Not empty."
//	@Param			prev_kv		query		boolean				false	"Answer with the deleted key in prev_kvs."
//	@Param			If-Match	header		string				false	"The key's ETag (its mod revision, quoted), or * for any existing version: delete only if it matches."
//	@Success		200			{object}	wire.DeleteResponse	"Deleted, or nothing to delete."
//	@Failure		400			{object}	wire.ErrorResponse			"invalid_argument: an empty key, a bad parameter or condition."
//	@Failure		401			{object}	wire.ErrorResponse			"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403			{object}	wire.ErrorResponse			"permission_denied: the caller may not write the key (nor read it, with a condition or prev_kv)."
//	@Failure		412			{object}	wire.ErrorResponse			"precondition_failed: the condition did not hold; kv is the key as it is, if it exists."
//	@Failure		500			{object}	wire.ErrorResponse			"internal: an unexpected failure."
//	@Failure		503			{object}	wire.ErrorResponse			"unavailable: the server is shutting down or its backend failed."
//	@Header			200,412		{integer}	X-Revision			"The store's revision when the request was served."
//	@Header			412			{string}	ETag				"The current key's mod revision, quoted."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/kv/{key} [delete]
func (h *Handler) deleteKey(w http.ResponseWriter, r *http.Request) {
	key, aerr := pathKey(r)
	if aerr != nil {
		h.writeError(w, r, aerr)
		return
	}
	q := newQuery(r, deleteKeyParams)
	prevKV := q.Bool("prev_kv")
	if q.Err() != nil {
		h.writeError(w, r, q.Err())
		return
	}
	h.doDelete(w, r, keyrange.Range{Key: key}, prevKV, true)
}

// deleteRangeParams are the query parameters of DELETE /v1/kv.
var deleteRangeParams = wire.ParamsOf(wire.SelectorParams, deleteKeyParams)

// deleteRange serves DELETE /v1/kv?key=...&prefix=true|range_end=...
//
//	@Summary		Delete a range of keys
//	@Description	Deletes key alone, [key, range_end), every key with the prefix key (prefix=true) or every key >= key (from_key=true), at one revision. Deleting nothing makes no revision. If-Match applies to a single key only.
//	@Tags			kv
//	@ID				deleteRange
//	@Produce		json
//	@Param			key					query		string				false	"The key, or the start of the range; key or key_base64 is required."
//	@Param			key_base64			query		string				false	"The key in standard base64, for bytes that are not UTF-8."	format(byte)
//	@Param			range_end			query		string				false	"The end of the range [key, range_end). At most one of range_end, prefix and from_key."
//	@Param			range_end_base64	query		string				false	"range_end in standard base64."	format(byte)
//	@Param			prefix				query		boolean				false	"Every key with the prefix key (an empty key: every key)."
//	@Param			from_key			query		boolean				false	"Every key >= key."
//	@Param			prev_kv				query		boolean				false	"Answer with the deleted keys in prev_kvs."
//	@Param			If-Match			header		string				false	"With a single key only: the key's ETag, or *; delete only if it matches."
//	@Success		200					{object}	wire.DeleteResponse	"Deleted, or nothing to delete."
//	@Failure		400					{object}	wire.ErrorResponse			"invalid_argument: no key, a bad selector or parameter."
//	@Failure		401					{object}	wire.ErrorResponse			"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403					{object}	wire.ErrorResponse			"permission_denied: the caller may not write every key of the range."
//	@Failure		412					{object}	wire.ErrorResponse			"precondition_failed: the condition did not hold; kv is the key as it is, if it exists."
//	@Failure		500					{object}	wire.ErrorResponse			"internal: an unexpected failure."
//	@Failure		503					{object}	wire.ErrorResponse			"unavailable: the server is shutting down or its backend failed."
//	@Header			200,412				{integer}	X-Revision			"The store's revision when the request was served."
//	@Header			412					{string}	ETag				"The current key's mod revision, quoted."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/kv [delete]
func (h *Handler) deleteRange(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r, deleteRangeParams)
	sel := q.Selector(true)
	prevKV := q.Bool("prev_kv")
	if q.Err() != nil {
		h.writeError(w, r, q.Err())
		return
	}
	h.doDelete(w, r, sel, prevKV, sel.End == nil)
}

func (h *Handler) doDelete(w http.ResponseWriter, r *http.Request, sel keyrange.Range, prevKV, single bool) {
	req := kv.DeleteRequest{Key: sel.Key, End: sel.End, PrevKV: prevKV}
	p, aerr := parsePrecondition(r)
	if aerr != nil {
		h.writeError(w, r, aerr)
		return
	}
	if p != (precondition{}) && (!single || p.ifNoneMatch) {
		h.writeError(w, r, badRequest("only If-Match applies to a delete, and only of a single key"))
		return
	}
	op := kv.Op{Delete: &req}
	if !h.authorize(w, r, writeAccess(sel, p, op)) {
		return
	}
	out, ok := h.writeKey(w, r, sel, p, op)
	if !ok {
		return
	}
	setRevision(w, out.Delete.Revision)
	writeRawJSON(w, http.StatusOK, append(appendDeleteResult(nil, out.Delete, req.PrevKV), '\n'))
}

func appendDeleteResult(b []byte, res *kv.DeleteResult, prevKV bool) []byte {
	b = wire.AppendHeader(b, res.Revision)
	b = wire.AppendIntField(b, "deleted", res.Deleted)
	if prevKV {
		b = wire.AppendKVs(b, "prev_kvs", res.PrevKVs, true)
	}
	return append(b, '}')
}
