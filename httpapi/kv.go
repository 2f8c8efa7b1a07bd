package httpapi

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/httpkv/httpkv/mvcc"
)

const (
	defaultListLimit = 1000
	maxListLimit     = 10000
)

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

// emptyPathKey answers 400 to a request for /v1/kv/ and reports it: the
// router serves that path as it serves /v1/kv, but it names the empty key,
// which is invalid.
func emptyPathKey(w http.ResponseWriter, r *http.Request) bool {
	if !strings.HasSuffix(r.URL.EscapedPath(), "/") {
		return false
	}
	writeAPIError(w, badRequest("key must not be empty"))
	return true
}

// setRevision sets the X-Revision header.
func setRevision(w http.ResponseWriter, rev int64) {
	w.Header().Set("X-Revision", strconv.FormatInt(rev, 10))
}

func etag(modRev int64) string { return `"` + strconv.FormatInt(modRev, 10) + `"` }

// getKey serves GET /v1/kv/{key}.
func (h *Handler) getKey(w http.ResponseWriter, r *http.Request) {
	key, aerr := pathKey(r)
	if aerr != nil {
		writeAPIError(w, aerr)
		return
	}
	q := newQuery(r)
	rev := q.int64("revision", 0)
	raw := q.boolean("raw")
	if q.err != nil {
		writeAPIError(w, q.err)
		return
	}
	if !h.authorize(w, r, Access{Read: []KeyRange{{Key: key}}}) {
		return
	}
	res, err := h.cfg.Store.KV().Range(key, nil, mvcc.RangeOptions{Revision: rev})
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	setRevision(w, res.Revision)
	if len(res.KVs) == 0 {
		writeAPIError(w, &apiError{status: http.StatusNotFound, code: "key_not_found",
			message: "key not found", extra: map[string]any{"revision": res.Revision}})
		return
	}
	kv := &res.KVs[0]
	tag := etag(kv.ModRevision)
	w.Header().Set("ETag", tag)
	if inm := r.Header.Get("If-None-Match"); inm != "" && (inm == "*" || matchETag(inm, kv.ModRevision)) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if raw {
		hd := w.Header()
		hd.Set("Content-Type", "application/octet-stream")
		hd.Set("X-Create-Revision", strconv.FormatInt(kv.CreateRevision, 10))
		hd.Set("X-Version", strconv.FormatInt(kv.Version, 10))
		hd.Set("X-Lease", strconv.FormatInt(kv.Lease, 10))
		hd.Set("Content-Length", strconv.Itoa(len(kv.Value)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(kv.Value)
		return
	}
	b := appendHeader(nil, res.Revision)
	b = append(b, `,"kv":`...)
	b = appendKV(b, kv, true)
	writeRawJSON(w, http.StatusOK, append(b, '}', '\n'))
}

// matchETag reports whether a conditional header's list of entity tags
// names modRev. Weak tags compare as strong ones: a revision is exact.
func matchETag(header string, modRev int64) bool {
	want := etag(modRev)
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == want {
			return true
		}
	}
	return false
}

// precondition is a parsed If-Match / If-None-Match pair.
type precondition struct {
	ifMatch     string // "" none, "*" any existing version, else a quoted mod revision
	ifNoneMatch bool   // If-None-Match: * (the key must not exist)
}

func parsePrecondition(r *http.Request) (precondition, *apiError) {
	var p precondition
	if v := strings.TrimSpace(r.Header.Get("If-Match")); v != "" {
		if v != "*" {
			t := strings.TrimPrefix(v, "W/")
			if len(t) < 2 || t[0] != '"' || t[len(t)-1] != '"' {
				return p, badRequest(`If-Match must be "*" or a quoted mod revision such as "\"42\""`)
			}
			if _, err := strconv.ParseInt(t[1:len(t)-1], 10, 64); err != nil {
				return p, badRequest("If-Match must name a mod revision, not %s", v)
			}
			v = t
		}
		p.ifMatch = v
	}
	if v := strings.TrimSpace(r.Header.Get("If-None-Match")); v != "" {
		if v != "*" {
			return p, badRequest(`only "If-None-Match: *" is supported on writes`)
		}
		p.ifNoneMatch = true
	}
	if p.ifMatch != "" && p.ifNoneMatch {
		return p, badRequest("If-Match and If-None-Match cannot be combined")
	}
	return p, nil
}

// compares turns the precondition on key into txn compares.
func (p precondition) compares(key []byte) []mvcc.Compare {
	switch {
	case p.ifNoneMatch:
		return []mvcc.Compare{{Key: key, Target: mvcc.CompareCreate, Result: mvcc.CompareEqual, Number: 0}}
	case p.ifMatch == "*":
		return []mvcc.Compare{{Key: key, Target: mvcc.CompareVersion, Result: mvcc.CompareGreater, Number: 0}}
	case p.ifMatch != "":
		rev, _ := strconv.ParseInt(p.ifMatch[1:len(p.ifMatch)-1], 10, 64)
		return []mvcc.Compare{{Key: key, Target: mvcc.CompareMod, Result: mvcc.CompareEqual, Number: rev}}
	}
	return nil
}

// conditional runs op under the precondition, as a txn whose failure
// branch reads the key; a failed condition answers 412 with the current kv.
func (h *Handler) conditional(w http.ResponseWriter, r *http.Request, key []byte, p precondition, op mvcc.Op) (*mvcc.OpResult, bool) {
	res, err := h.cfg.Store.Txn(mvcc.TxnRequest{
		Compare: p.compares(key),
		Success: []mvcc.Op{op},
		Failure: []mvcc.Op{{Range: &mvcc.RangeOp{Key: key}}},
	})
	if err != nil {
		h.writeError(w, r, err)
		return nil, false
	}
	if !res.Succeeded {
		ae := &apiError{status: http.StatusPreconditionFailed, code: "precondition_failed",
			message: "the key's current version does not match the condition",
			extra:   map[string]any{"revision": res.Revision}}
		if kvs := res.Responses[0].Range.KVs; len(kvs) == 1 {
			ae.extra["kv"] = jsonKV{kv: &kvs[0], withValue: true}
			w.Header().Set("ETag", etag(kvs[0].ModRevision))
		}
		setRevision(w, res.Revision)
		writeAPIError(w, ae)
		return nil, false
	}
	return &res.Responses[0], true
}

// jsonKV lets encoding/json write a KeyValue with its base64 twins.
type jsonKV struct {
	kv        *mvcc.KeyValue
	withValue bool
}

func (j jsonKV) MarshalJSON() ([]byte, error) { return appendKV(nil, j.kv, j.withValue), nil }

// putKey serves PUT /v1/kv/{key}: the body is the value.
func (h *Handler) putKey(w http.ResponseWriter, r *http.Request) {
	key, aerr := pathKey(r)
	if aerr != nil {
		writeAPIError(w, aerr)
		return
	}
	q := newQuery(r)
	req := mvcc.PutRequest{
		Key:         key,
		Lease:       q.int64("lease", 0),
		PrevKV:      q.boolean("prev_kv"),
		IgnoreValue: q.boolean("ignore_value"),
		IgnoreLease: q.boolean("ignore_lease"),
	}
	if q.err != nil {
		writeAPIError(w, q.err)
		return
	}
	p, aerr := parsePrecondition(r)
	if aerr != nil {
		writeAPIError(w, aerr)
		return
	}
	value, err := io.ReadAll(r.Body)
	if err != nil {
		h.writeError(w, r, bodyError(err))
		return
	}
	req.Value = value
	// A condition or prev_kv answers with the key's value: reading too.
	access := Access{Write: []KeyRange{{Key: key}}}
	if p != (precondition{}) || req.PrevKV {
		access.Read = access.Write
	}
	if !h.authorize(w, r, access) {
		return
	}
	var res mvcc.PutResult
	if p == (precondition{}) {
		res, err = h.cfg.Store.Put(req)
		if err != nil {
			h.writeError(w, r, err)
			return
		}
	} else {
		out, ok := h.conditional(w, r, key, p, mvcc.Op{Put: &req})
		if !ok {
			return
		}
		res = *out.Put
	}
	setRevision(w, res.Revision)
	w.Header().Set("ETag", etag(res.Revision))
	b := appendHeader(nil, res.Revision)
	if res.PrevKV != nil {
		b = append(b, `,"prev_kv":`...)
		b = appendKV(b, res.PrevKV, true)
	}
	writeRawJSON(w, http.StatusOK, append(b, '}', '\n'))
}

// bodyError keeps a too-large body's error and reports others as bad input.
func bodyError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return err
	}
	return badRequest("reading the request body: %v", err)
}

// deleteKey serves DELETE /v1/kv/{key}.
func (h *Handler) deleteKey(w http.ResponseWriter, r *http.Request) {
	key, aerr := pathKey(r)
	if aerr != nil {
		writeAPIError(w, aerr)
		return
	}
	h.doDelete(w, r, KeyRange{Key: key}, true)
}

// deleteRange serves DELETE /v1/kv?key=...&prefix=true|range_end=...
func (h *Handler) deleteRange(w http.ResponseWriter, r *http.Request) {
	if emptyPathKey(w, r) {
		return
	}
	q := newQuery(r)
	sel := q.selector(true)
	if q.err != nil {
		writeAPIError(w, q.err)
		return
	}
	h.doDelete(w, r, sel, sel.End == nil)
}

func (h *Handler) doDelete(w http.ResponseWriter, r *http.Request, sel KeyRange, single bool) {
	q := newQuery(r)
	req := mvcc.DeleteRequest{Key: sel.Key, End: sel.End, PrevKV: q.boolean("prev_kv")}
	if q.err != nil {
		writeAPIError(w, q.err)
		return
	}
	p, aerr := parsePrecondition(r)
	if aerr != nil {
		writeAPIError(w, aerr)
		return
	}
	if p != (precondition{}) && (!single || p.ifNoneMatch) {
		writeAPIError(w, badRequest("only If-Match applies to a delete, and only of a single key"))
		return
	}
	// A condition or prev_kv answers with the keys' values: reading too.
	access := Access{Write: []KeyRange{sel}}
	if p != (precondition{}) || req.PrevKV {
		access.Read = access.Write
	}
	if !h.authorize(w, r, access) {
		return
	}
	var res mvcc.DeleteResult
	if p == (precondition{}) {
		var err error
		if res, err = h.cfg.Store.DeleteRange(req); err != nil {
			h.writeError(w, r, err)
			return
		}
	} else {
		out, ok := h.conditional(w, r, sel.Key, p, mvcc.Op{Delete: &req})
		if !ok {
			return
		}
		res = *out.Delete
	}
	setRevision(w, res.Revision)
	writeRawJSON(w, http.StatusOK, append(appendDeleteResult(nil, &res, req.PrevKV), '\n'))
}

func appendDeleteResult(b []byte, res *mvcc.DeleteResult, prevKV bool) []byte {
	b = appendHeader(b, res.Revision)
	b = appendIntField(b, "deleted", res.Deleted)
	if prevKV {
		b = appendKVs(b, "prev_kvs", res.PrevKVs, true)
	}
	return append(b, '}')
}
