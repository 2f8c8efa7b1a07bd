package httpapi

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
)

// params is the query parameters one route accepts. Each is declared
// next to the handler that reads them, as the one list of what that route
// takes: newQuery refuses any other name, so that a misspelt parameter is
// an error rather than a default, and a read of a name the list lacks is
// a bug that answers 500 (TestQueryParamsDocumented holds every list to
// the route's OpenAPI parameters).
type params []string

// paramsOf joins lists of parameters.
func paramsOf(lists ...params) params {
	var out params
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// selectorParams are the range selectors of list, delete, watch, history
// and the permission a revoke names.
var selectorParams = params{"key", "key_base64", "range_end", "range_end_base64", "prefix", "from_key"}

// query reads query parameters, remembering the first malformed one.
type query struct {
	v        url.Values
	accepted params
	err      *apiError
}

// newQuery reads r's query string, which may hold the accepted
// parameters only (and access_token, on the streams that take it), each
// at most once.
func newQuery(r *http.Request, accepted params) *query {
	q := &query{v: r.URL.Query(), accepted: accepted}
	q.err = unknownParam(r, q.v, accepted)
	if q.err == nil {
		q.err = repeatedParam(q.v)
	}
	return q
}

// get returns the parameter name, which the route must accept.
func (q *query) get(name string) string {
	q.declared(name)
	return q.v.Get(name)
}

// declared fails the request when the handler reads a parameter its
// route's list lacks: the list is what the route tells clients it takes.
func (q *query) declared(name string) {
	if !slices.Contains(q.accepted, name) && q.err == nil {
		q.err = errorf(kv.CodeInternal, "query parameter %q read but not declared", name)
	}
}

func (q *query) fail(format string, args ...any) {
	if q.err == nil {
		q.err = badRequest(format, args...)
	}
}

func (q *query) has(name string) bool {
	q.declared(name)
	return q.v.Has(name)
}

// boolean reads a true/false/1/0 parameter; absent is false.
func (q *query) boolean(name string) bool {
	s := q.get(name)
	switch strings.ToLower(s) {
	case "", "false", "0":
		return false
	case "true", "1":
		return true
	}
	q.fail("%s must be true, false, 1 or 0, not %q", name, s)
	return false
}

// int64 reads a non-negative integer parameter; absent is def.
func (q *query) int64(name string, def int64) int64 {
	s := q.get(name)
	if s == "" {
		return def
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		q.fail("%s must be a non-negative integer, not %q", name, s)
		return def
	}
	return n
}

// filters reads the filters parameter of a watch or a history read: a
// comma list of noput and nodelete.
func (q *query) filters() (noPut, noDelete bool) {
	f := q.get("filters")
	if f == "" {
		return false, false
	}
	for _, name := range strings.Split(f, ",") {
		switch strings.TrimSpace(name) {
		case "noput":
			noPut = true
		case "nodelete":
			noDelete = true
		default:
			q.fail("filters is a comma list of noput and nodelete, not %q", f)
		}
	}
	return noPut, noDelete
}

// bytes reads a key-like parameter, or its name_base64 twin.
func (q *query) bytes(name string) []byte {
	q.declared(name)
	q.declared(name + "_base64")
	s, hasS := q.v[name]
	b, hasB := q.v[name+"_base64"]
	switch {
	case hasS && hasB:
		q.fail("give %s or %s_base64, not both", name, name)
	case hasB:
		out, err := base64.StdEncoding.DecodeString(b[0])
		if err != nil {
			q.fail("%s_base64 is not valid base64", name)
		}
		return out
	case hasS:
		return []byte(s[0])
	}
	return nil
}

// selector reads the range selectors shared by list, delete and watch:
// key alone, key+range_end, key+prefix, key+from_key; with requireKey
// false, no key means every key.
func (q *query) selector(requireKey bool) keyrange.Range {
	key := q.bytes("key")
	end := q.bytes("range_end")
	prefix := q.boolean("prefix")
	fromKey := q.boolean("from_key")
	n := 0
	for _, set := range []bool{end != nil, prefix, fromKey} {
		if set {
			n++
		}
	}
	if n > 1 {
		q.fail("give at most one of range_end, prefix and from_key")
		return keyrange.Range{}
	}
	if key == nil {
		if requireKey {
			q.fail("key is required")
			return keyrange.Range{}
		}
		if n > 0 && !prefix {
			q.fail("range_end and from_key need a key")
			return keyrange.Range{}
		}
		return keyrange.All()
	}
	switch {
	case prefix && len(key) == 0:
		return keyrange.All()
	case len(key) == 0:
		q.fail("key must not be empty")
	case prefix:
		return keyrange.Prefix(key)
	case fromKey:
		return keyrange.FromKey(key)
	case end != nil:
		if len(end) == 0 {
			q.fail("range_end must not be empty")
		}
		return keyrange.Between(key, end)
	}
	return keyrange.Single(key)
}
