package wire

import (
	"encoding/base64"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
)

// Params is the query parameters one route accepts. Each is declared
// next to the handler that reads them, as the one list of what that route
// takes: the API refuses any other name, so that a misspelt parameter is
// an error rather than a default, and a read of a name the list lacks is
// a bug that answers 500 (TestQueryParamsDocumented in httpapi holds every
// list to the route's OpenAPI parameters).
type Params []string

// ParamsOf joins lists of parameters.
func ParamsOf(lists ...Params) Params {
	var out Params
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// SelectorParams are the range selectors of list, delete, watch, history
// and the permission a revoke names.
var SelectorParams = Params{"key", "key_base64", "range_end", "range_end_base64", "prefix", "from_key"}

// RangeOptionParams are the parameters Query.RangeOptions reads.
var RangeOptionParams = Params{"revision", "keys_only", "count_only", "min_mod_revision", "max_mod_revision",
	"min_create_revision", "max_create_revision", "sort_target", "sort_order"}

// Query reads query parameters, remembering the first failure: a
// handler reads every parameter it takes, then answers Err if it is not
// nil.
type Query struct {
	v        url.Values
	accepted Params
	err      error
}

// NewQuery reads the parameters v of a route that accepts those of
// accepted. It does not refuse the names v holds that accepted lacks, nor
// a name given twice: the API does (it knows the route, and where a token
// may come in the query), and records why with Fail.
func NewQuery(v url.Values, accepted Params) *Query {
	return &Query{v: v, accepted: accepted}
}

// Err is the first failure recorded, nil if none: an *Error that answers
// 400, or 500 for a parameter read that the route does not declare.
func (q *Query) Err() error { return q.err }

// Fail records err as the query's failure, unless one is recorded
// already; a nil err records nothing.
func (q *Query) Fail(err error) {
	if q.err == nil && err != nil {
		q.err = err
	}
}

// Failf records a malformed parameter, as Fail does.
func (q *Query) Failf(format string, args ...any) {
	if q.err == nil {
		q.err = badRequest(format, args...)
	}
}

// Get returns the parameter name, which the route must accept.
func (q *Query) Get(name string) string {
	q.declared(name)
	return q.v.Get(name)
}

// declared fails the request when the handler reads a parameter its
// route's list lacks: the list is what the route tells clients it takes.
func (q *Query) declared(name string) {
	if !slices.Contains(q.accepted, name) && q.err == nil {
		q.err = &Error{Code: kv.CodeInternal, Message: "query parameter " + strconv.Quote(name) + " read but not declared"}
	}
}

// Has says whether the parameter name is given, even empty.
func (q *Query) Has(name string) bool {
	q.declared(name)
	return q.v.Has(name)
}

// Bool reads a true/false/1/0 parameter; absent is false.
func (q *Query) Bool(name string) bool {
	s := q.Get(name)
	switch strings.ToLower(s) {
	case "", "false", "0":
		return false
	case "true", "1":
		return true
	}
	q.Failf("%s must be true, false, 1 or 0, not %q", name, s)
	return false
}

// Int64 reads a non-negative integer parameter; absent is def.
func (q *Query) Int64(name string, def int64) int64 {
	s := q.Get(name)
	if s == "" {
		return def
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		q.Failf("%s must be a non-negative integer, not %q", name, s)
		return def
	}
	return n
}

// Duration reads a Go duration (10s, 1m30s) in [0, max]; absent is def.
func (q *Query) Duration(name string, def, max time.Duration) time.Duration {
	s := q.Get(name)
	if s == "" {
		return def
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d > max {
		q.Failf("%s must be a duration from 0s to %v (such as 10s or 1m30s), not %q", name, max, s)
	}
	return d
}

// TTL reads the ttl parameter of a put: a positive whole number of
// seconds, or 0 when absent. It cannot go with lease or ignore_lease.
func (q *Query) TTL() int64 {
	if !q.Has("ttl") {
		return 0
	}
	s := q.Get("ttl")
	n, err := strconv.ParseInt(s, 10, 64)
	switch {
	case err != nil || n < 1:
		q.Failf("ttl must be a whole number of seconds, at least 1, not %q", s)
		return 0
	case q.Has("lease") || q.Bool("ignore_lease"):
		q.Failf("ttl gives the key a lease of its own: it cannot go with lease or ignore_lease")
		return 0
	}
	return n
}

// Filters reads the filters parameter of a watch or a history read: a
// comma list of noput and nodelete.
func (q *Query) Filters() (noPut, noDelete bool) {
	f := q.Get("filters")
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
			q.Failf("filters is a comma list of noput and nodelete, not %q", f)
		}
	}
	return noPut, noDelete
}

// Bytes reads a key-like parameter, or its name_base64 twin.
func (q *Query) Bytes(name string) []byte {
	q.declared(name)
	q.declared(name + "_base64")
	s, hasS := q.v[name]
	b, hasB := q.v[name+"_base64"]
	switch {
	case hasS && hasB:
		q.Failf("give %s or %s_base64, not both", name, name)
	case hasB:
		out, err := base64.StdEncoding.DecodeString(b[0])
		if err != nil {
			q.Failf("%s_base64 is not valid base64", name)
		}
		return out
	case hasS:
		return []byte(s[0])
	}
	return nil
}

// Selector reads the range selectors shared by list, delete and watch:
// key alone, key+range_end, key+prefix, key+from_key; with requireKey
// false, no key means every key.
func (q *Query) Selector(requireKey bool) keyrange.Range {
	key := q.Bytes("key")
	end := q.Bytes("range_end")
	prefix := q.Bool("prefix")
	fromKey := q.Bool("from_key")
	n := 0
	for _, set := range []bool{end != nil, prefix, fromKey} {
		if set {
			n++
		}
	}
	if n > 1 {
		q.Failf("give at most one of range_end, prefix and from_key")
		return keyrange.Range{}
	}
	if key == nil {
		if requireKey {
			q.Failf("key is required")
			return keyrange.Range{}
		}
		if n > 0 && !prefix {
			q.Failf("range_end and from_key need a key")
			return keyrange.Range{}
		}
		return keyrange.All()
	}
	switch {
	case prefix && len(key) == 0:
		return keyrange.All()
	case len(key) == 0:
		q.Failf("key must not be empty")
	case prefix:
		return keyrange.Prefix(key)
	case fromKey:
		return keyrange.FromKey(key)
	case end != nil:
		if len(end) == 0 {
			q.Failf("range_end must not be empty")
		}
		return keyrange.Between(key, end)
	}
	return keyrange.Single(key)
}

var (
	sortTargets = map[string]kv.SortTarget{
		"key": kv.SortByKey, "version": kv.SortByVersion, "create": kv.SortByCreate,
		"mod": kv.SortByMod, "value": kv.SortByValue,
	}
	sortOrders = map[string]kv.SortOrder{"": kv.SortNone, "none": kv.SortNone, "ascend": kv.SortAscend, "descend": kv.SortDescend}
)

// RangeOptions reads the options a list shares with a txn range
// (RangeOptionParams).
func (q *Query) RangeOptions() kv.RangeOptions {
	o := kv.RangeOptions{
		Revision:          q.Int64("revision", 0),
		KeysOnly:          q.Bool("keys_only"),
		CountOnly:         q.Bool("count_only"),
		MinModRevision:    q.Int64("min_mod_revision", 0),
		MaxModRevision:    q.Int64("max_mod_revision", 0),
		MinCreateRevision: q.Int64("min_create_revision", 0),
		MaxCreateRevision: q.Int64("max_create_revision", 0),
	}
	if s := q.Get("sort_target"); s != "" {
		t, ok := sortTargets[s]
		if !ok {
			q.Failf("sort_target must be key, version, create, mod or value, not %q", s)
		}
		o.SortTarget = t
	}
	order, ok := sortOrders[q.Get("sort_order")]
	if !ok {
		q.Failf("sort_order must be ascend or descend, not %q", q.Get("sort_order"))
	}
	o.SortOrder = order
	return o
}
