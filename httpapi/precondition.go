package httpapi

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
)

// A write to /v1/kv/{key} may be conditional, as HTTP has it: If-Match
// and If-None-Match name the key's mod revision as its entity tag, and
// the condition becomes the compares of the txn that writes, so it is
// checked at the revision the write makes.

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
func (p precondition) compares(key []byte) []kv.Compare {
	switch {
	case p.ifNoneMatch:
		return []kv.Compare{{Key: key, Target: kv.CompareCreate, Result: kv.CompareEqual, Number: 0}}
	case p.ifMatch == "*":
		return []kv.Compare{{Key: key, Target: kv.CompareVersion, Result: kv.CompareGreater, Number: 0}}
	case p.ifMatch != "":
		rev, _ := strconv.ParseInt(p.ifMatch[1:len(p.ifMatch)-1], 10, 64)
		return []kv.Compare{{Key: key, Target: kv.CompareMod, Result: kv.CompareEqual, Number: rev}}
	}
	return nil
}

// writeAccess is what a put or a delete of sel touches.
func writeAccess(sel keyrange.Range, p precondition, op kv.Op) Access {
	access := Access{Write: []keyrange.Range{sel}}
	// A condition or prev_kv answers with values: that is reading too.
	if p != (precondition{}) || op.Put != nil && op.Put.PrevKV || op.Delete != nil && op.Delete.PrevKV {
		access.Read = access.Write
	}
	return access
}

// writeKey runs a put or a delete of sel, which the caller authorized,
// under the precondition if there is one. It answers the request itself
// when it reports false.
func (h *Handler) writeKey(w http.ResponseWriter, r *http.Request, sel keyrange.Range, p precondition, op kv.Op) (*kv.OpResult, bool) {
	out, err := h.tryWriteKey(w, r, sel, p, op)
	if err != nil {
		h.writeError(w, r, err)
		return nil, false
	}
	return out, true
}

// tryWriteKey is writeKey leaving the answer of a failure to the caller:
// the error to answer with, and for a failed condition the headers it
// sets on w.
func (h *Handler) tryWriteKey(w http.ResponseWriter, r *http.Request, sel keyrange.Range, p precondition, op kv.Op) (*kv.OpResult, error) {
	if p != (precondition{}) {
		return h.conditional(w, r, sel.Key, p, op)
	}
	var out kv.OpResult
	var err error
	if op.Put != nil {
		var res kv.PutResult
		res, err = h.cfg.Backend.Put(r.Context(), *op.Put, h.leaseGuard(r))
		out.Put = &res
	} else {
		var res kv.DeleteResult
		res, err = h.cfg.Backend.Delete(r.Context(), *op.Delete)
		out.Delete = &res
	}
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// conditional runs op under the precondition, as a txn whose failure
// branch reads the key; a failed condition is a 412 carrying the current
// kv, whose ETag and revision it sets on w.
func (h *Handler) conditional(w http.ResponseWriter, r *http.Request, key []byte, p precondition, op kv.Op) (*kv.OpResult, error) {
	res, err := h.cfg.Backend.Txn(r.Context(), kv.TxnRequest{
		Compare: p.compares(key),
		Success: []kv.Op{op},
		Failure: []kv.Op{{Range: &kv.RangeOp{Key: key}}},
	}, h.leaseGuard(r))
	if err != nil {
		return nil, err
	}
	if !res.Succeeded {
		ae := p.failed(key, res.Responses[0].Range.KVs).with("revision", res.Revision)
		if kvs := res.Responses[0].Range.KVs; len(kvs) == 1 {
			w.Header().Set("ETag", etag(kvs[0].ModRevision))
		}
		setRevision(w, res.Revision)
		return nil, ae
	}
	return &res.Responses[0], nil
}

// failed says why the precondition p on key did not hold, given the key
// as it is (none when it does not exist), which the answer carries.
func (p precondition) failed(key []byte, kvs []kv.KeyValue) *apiError {
	if len(kvs) == 0 {
		return errorf(kv.CodePreconditionFailed, "the key %q does not exist, and If-Match %s needs it to", key, p.ifMatch)
	}
	cur := &kvs[0]
	var ae *apiError
	if p.ifNoneMatch {
		ae = errorf(kv.CodePreconditionFailed, "the key %q exists (ETag %s), and If-None-Match: * needs it not to", key, etag(cur.ModRevision))
	} else {
		ae = errorf(kv.CodePreconditionFailed, "the key %q has changed: its ETag is %s, not %s; read it again and retry with the new ETag", key, etag(cur.ModRevision), p.ifMatch)
	}
	return ae.with("kv", jsonKV{kv: cur, withValue: true})
}
