package httpapi

import (
	"errors"
	"mime"
	"net/http"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/patch"

	"github.com/httpkv/httpkv/wire"
)

// patchCostFactor is how many times its value and its patch a patch is
// counted for against --max-inflight-request-bytes while it applies: the
// library holds the parsed document, its copies and the result.
const patchCostFactor = 8

// patchKinds are the media types of PATCH /v1/kv/{key}.
var patchKinds = map[string]patch.Kind{
	"application/merge-patch+json": patch.Merge,
	"application/json-patch+json":  patch.JSON,
}

// patchKey serves PATCH /v1/kv/{key}.
//
//	@Summary		Change part of a key's JSON value
//	@Description	Applies a JSON Merge Patch (Content-Type application/merge-patch+json, RFC 7396) or a JSON Patch (application/json-patch+json, RFC 6902) to the key's value, which must be JSON, and writes the result as compact JSON at a new revision, keeping the key's lease.
//	@Description	The result is written only if the key has not changed since it was read; if it has, the patch is applied again to the new value (a few times at most, then 503). If-Match with the key's ETag applies it only to that version (412 otherwise, with the key as it is). A merge patch on a missing key applies to null and creates the key; a JSON Patch needs the key.
//	@Description	A JSON Patch has at most 1000 operations; its copies, and the result, are bounded by --max-request-bytes.
//	@Tags			kv
//	@ID				patchKey
//	@Accept			application/merge-patch+json,application/json-patch+json
//	@Produce		json
//	@Param			key			path		string			true	"The key: everything after /v1/kv/, percent-decoded from the escaped path (a%2Fb is the key a/b; slashes in the path are part of the key). Not empty."
//	@Param			patch		body		object			true	"A JSON Merge Patch (an object, or any JSON value that replaces the value) or a JSON Patch (an array of operations)."
//	@Param			If-Match	header		string			false	"The key's ETag (its mod revision in double quotes), or * for any existing version: patch only if it matches."
//	@Success		200			{object}	wire.GetResponse	"The key as written; the header's revision is the write's."
//	@Failure		400			{object}	wire.ErrorResponse		"invalid_argument: an empty key, a body that is not JSON or not a JSON Patch, more than 1000 operations, a bad condition."
//	@Failure		401			{object}	wire.ErrorResponse		"unauthenticated: auth is enabled and the token is missing, invalid or expired."
//	@Failure		403			{object}	wire.ErrorResponse		"permission_denied: the caller may not read and write the key."
//	@Failure		404			{object}	wire.ErrorResponse		"key_not_found: a JSON Patch of a key that does not exist."
//	@Failure		409			{object}	wire.ErrorResponse		"patch_failed: the value is not JSON, a path of the JSON Patch is missing, its test operation failed, or the result would be larger than --max-request-bytes."
//	@Failure		412			{object}	wire.ErrorResponse		"precondition_failed: the key is not at the If-Match ETag; kv is the key as it is, if it exists, and ETag its entity tag."
//	@Failure		413			{object}	wire.ErrorResponse		"request_too_large: the body is over the server's --max-request-bytes."
//	@Failure		415			{object}	wire.ErrorResponse		"unsupported_media_type: a Content-Type other than the two patch types."
//	@Failure		429			{object}	wire.ErrorResponse		"too_many_requests: more request bytes are in flight (bodies, and patches being applied) than --max-inflight-request-bytes allows; retry later (Retry-After)."
//	@Failure		500			{object}	wire.ErrorResponse		"internal: an unexpected failure."
//	@Failure		503			{object}	wire.ErrorResponse		"unavailable: the server is shutting down or its backend failed, or the key kept changing while the patch was applied."
//	@Failure		507			{object}	wire.ErrorResponse		"no_space: the backend quota is exceeded (NOSPACE alarm)."
//	@Header			200,412		{integer}	X-Revision	"The revision of the write, or the store's when the condition failed."
//	@Header			200,412		{string}	ETag		"The key's new mod revision, quoted; on 412 the current key's."
//	@Header			401	{string}	WWW-Authenticate	"Bearer"
//	@Security		BearerAuth
//	@Router			/v1/kv/{key} [patch]
func (h *Handler) patchKey(w http.ResponseWriter, r *http.Request) {
	key, aerr := pathKey(r)
	if aerr != nil {
		h.writeError(w, r, aerr)
		return
	}
	p, aerr := parsePrecondition(r)
	if aerr == nil && p.ifNoneMatch {
		aerr = badRequest("a PATCH takes If-Match only, not If-None-Match")
	}
	if aerr != nil {
		h.writeError(w, r, aerr)
		return
	}
	sel := []keyrange.Range{{Key: key}}
	if !h.authorize(w, r, Access{Read: sel, Write: sel}) {
		return
	}
	kind, aerr := patchKind(r)
	if aerr != nil {
		h.writeError(w, r, aerr)
		return
	}
	body, err := readBody(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	pt, err := patch.Parse(kind, body, int(h.cfg.MaxRequestBytes))
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	res, err := patch.Update(r.Context(), h.cfg.Backend, patch.Request{
		Key:     key,
		IfMatch: p.revision(),
		Next: func(cur *kv.KeyValue) ([]byte, error) {
			var value []byte
			if cur != nil {
				value = cur.Value
			}
			cost := patchCostFactor * int64(len(value)+len(body))
			if !h.inflight.TryAcquire(cost) {
				return nil, errorf(kv.CodeTooManyRequests, "too many request bytes are in flight (--max-inflight-request-bytes), patches being applied included: retry later")
			}
			defer h.inflight.Release(cost)
			return pt.Apply(key, value, cur != nil)
		},
	})
	var ce *patch.ChangedError
	if errors.As(err, &ce) {
		var kvs []kv.KeyValue
		if ce.Current != nil {
			kvs = []kv.KeyValue{*ce.Current}
			w.Header().Set("ETag", etag(ce.Current.ModRevision))
		}
		setRevision(w, ce.Revision)
		err = p.failed(key, kvs).with("revision", ce.Revision)
	}
	if err != nil {
		if code, _, _ := kv.CodeOf(err); code == kv.CodeTooManyRequests {
			w.Header().Set("Retry-After", "1")
		}
		h.writeError(w, r, err)
		return
	}
	setRevision(w, res.Revision)
	w.Header().Set("ETag", etag(res.KV.ModRevision))
	b := wire.AppendHeader(make([]byte, 0, 64+wire.KVsSize([]kv.KeyValue{res.KV}, true)), res.Revision)
	b = append(b, `,"kv":`...)
	b = wire.AppendKV(b, &res.KV, true)
	writeRawJSON(w, http.StatusOK, append(b, '}', '\n'))
}

// patchKind reads the kind of patch from the Content-Type.
func patchKind(r *http.Request) (patch.Kind, *apiError) {
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if kind, ok := patchKinds[mt]; ok && err == nil {
		return kind, nil
	}
	return 0, errorf(codeUnsupportedMediaType, "a PATCH body is application/merge-patch+json (RFC 7396) or application/json-patch+json (RFC 6902), not %q", ct)
}

// revision is the mod revision If-Match names for patch.Update: 0 for
// none, -1 for *.
func (p precondition) revision() int64 {
	switch p.ifMatch {
	case "":
		return 0
	case "*":
		return -1
	}
	return p.compares(nil)[0].Number
}
