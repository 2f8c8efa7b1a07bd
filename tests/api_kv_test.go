package tests

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// TestKVPutGet covers PUT and GET of one key: the answer's header,
// revisions, versions, prev_kv, reads at a past revision, raw reads and
// their headers, and 404 key_not_found.
func TestKVPutGet(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	// 1 on a fresh store; a gateway's cluster has taken one more (its
	// deployment's marker) before the test begins.
	base := s.Status(t).Revision

	var p1 client.PutResponse
	r := s.Do(t, "PUT", "/v1/kv/greeting", []byte("hello"), "Content-Type", "text/plain").Ok(t, http.StatusOK, &p1)
	rev1 := p1.Header.Revision
	if rev1 != base+1 {
		t.Errorf("first PUT: header.revision = %d, want %d, the one after the store's %d", rev1, base+1, base)
	}
	if p1.PrevKv != nil {
		t.Errorf("PUT without prev_kv = %s, want no prev_kv", r.Body)
	}
	if got, want := r.Header.Get("ETag"), fmt.Sprintf(`"%d"`, rev1); got != want {
		t.Errorf("PUT: ETag = %s, want %s", got, want)
	}

	r = s.Do(t, "GET", "/v1/kv/greeting", nil)
	var g client.GetResponse
	r.Ok(t, http.StatusOK, &g)
	if ct := r.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("GET: Content-Type = %q, want application/json; charset=utf-8", ct)
	}
	want := fmt.Sprintf("{\"greeting\"=\"hello\" create=%d mod=%d version=1 lease=0}", base+1, base+1)
	if e2e.KVString(&g.Kv) != want || g.Header.Revision != base+1 {
		t.Errorf("GET = %s, want kv %s at revision %d", r.Body, want, base+1)
	}
	if got, want := r.Header.Get("ETag"), fmt.Sprintf(`"%d"`, base+1); got != want {
		t.Errorf("GET: ETag = %s, want %s", got, want)
	}
	var raw struct {
		KV map[string]json.RawMessage `json:"kv"`
	}
	r.Decode(t, &raw)
	wantFields := []string{"create_revision", "key", "lease", "mod_revision", "value", "version"}
	if got := slices.Sorted(maps.Keys(raw.KV)); !slices.Equal(got, wantFields) {
		t.Errorf("GET: kv fields = %v, want %v", got, wantFields)
	}

	var p2 client.PutResponse
	s.Do(t, "PUT", "/v1/kv/greeting?prev_kv=true", []byte("world")).Ok(t, http.StatusOK, &p2)
	rev2 := p2.Header.Revision
	if rev2 != rev1+1 || p2.PrevKv == nil || e2e.KVString(p2.PrevKv) != want {
		t.Errorf("PUT ?prev_kv=true = revision %d, prev_kv %v; want revision %d, prev_kv %s", rev2, p2.PrevKv, rev1+1, want)
	}

	// A read at a past revision answers the current revision in its header.
	s.Do(t, "GET", "/v1/kv/greeting?revision="+strconv.FormatInt(rev1, 10), nil).Ok(t, http.StatusOK, &g)
	if e2e.ValueOf(&g.Kv) != "hello" || g.Header.Revision != rev2 {
		t.Errorf("GET ?revision=%d = %q at header revision %d, want \"hello\" at %d", rev1, e2e.ValueOf(&g.Kv), g.Header.Revision, rev2)
	}

	for _, q := range []string{"raw=true", "raw=1", "raw=TRUE"} {
		r = s.Do(t, "GET", "/v1/kv/greeting?"+q, nil).Want(t, http.StatusOK)
		wantHeaders := map[string]string{
			"Content-Type":      "application/octet-stream",
			"X-Revision":        strconv.FormatInt(rev2, 10),
			"ETag":              fmt.Sprintf(`"%d"`, rev2),
			"X-Create-Revision": strconv.FormatInt(rev1, 10),
			"X-Version":         "2",
			"X-Lease":           "0",
		}
		for name, v := range wantHeaders {
			if got := r.Header.Get(name); got != v {
				t.Errorf("GET ?%s: %s = %q, want %q", q, name, got, v)
			}
		}
		if string(r.Body) != "world" {
			t.Errorf("GET ?%s: body %q, want \"world\"", q, r.Body)
		}
	}
	s.Do(t, "GET", "/v1/kv/greeting?raw=false", nil).Ok(t, http.StatusOK, &g)
	s.Do(t, "GET", "/v1/kv/greeting?raw=0", nil).Ok(t, http.StatusOK, &g)
	s.Do(t, "GET", "/v1/kv/greeting?raw=yes", nil).WantError(t, http.StatusBadRequest, "invalid_argument")

	// Binary and empty values, byte for byte.
	bin := []byte{0, 1, 0xfe, 0xff, '\n', 0x80}
	s.Do(t, "PUT", "/v1/kv/bin", bin, "Content-Type", "application/octet-stream").Want(t, http.StatusOK)
	if r := s.Do(t, "GET", "/v1/kv/bin?raw=true", nil).Want(t, http.StatusOK); string(r.Body) != string(bin) {
		t.Errorf("GET /v1/kv/bin?raw=true = %q, want %q", r.Body, bin)
	}
	s.Do(t, "PUT", "/v1/kv/empty", []byte{}).Want(t, http.StatusOK)
	if kv := s.Get(t, "empty"); kv.Value == nil || *kv.Value != "" || kv.ValueBase64 != nil {
		t.Errorf("GET of an empty value = %v, want \"value\":\"\"", e2e.KVString(&kv))
	}
	if r := s.Do(t, "GET", "/v1/kv/empty?raw=true", nil).Want(t, http.StatusOK); len(r.Body) != 0 || r.Header.Get("Content-Length") != "0" {
		t.Errorf("GET /v1/kv/empty?raw=true = %q with Content-Length %q, want empty", r.Body, r.Header.Get("Content-Length"))
	}

	cur := s.Status(t).Revision
	for _, path := range []string{"/v1/kv/missing", "/v1/kv/missing?raw=true", "/v1/kv/greeting?revision=" + strconv.FormatInt(base, 10)} {
		r := s.Do(t, "GET", path, nil)
		e := r.WantError(t, http.StatusNotFound, "key_not_found")
		if e2e.Deref(e.Revision) != cur || r.Header.Get("X-Revision") != strconv.FormatInt(cur, 10) {
			t.Errorf("GET %s: error revision %d, X-Revision %q; want %d in both", path, e2e.Deref(e.Revision), r.Header.Get("X-Revision"), cur)
		}
	}
	s.Do(t, "GET", fmt.Sprintf("/v1/kv/greeting?revision=%d", cur+1), nil).WantError(t, http.StatusBadRequest, "future_revision")
	s.Do(t, "GET", "/v1/kv/greeting?revision=-1", nil).WantError(t, http.StatusBadRequest, "invalid_argument")
	s.Do(t, "GET", "/v1/kv/greeting?revision=x", nil).WantError(t, http.StatusBadRequest, "invalid_argument")
}

// TestKVEmptyKey: the empty key is invalid on every method of the key's
// path.
func TestKVEmptyKey(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	s.Put(t, "k", "v")
	before := s.Status(t).Revision
	for _, method := range []string{"GET", "PUT", "DELETE"} {
		for _, path := range []string{"/v1/kv/", "/v1/kv/?key=k", "/v1/kv/?key=k&prefix=true"} {
			s.Do(t, method, path, []byte("x")).WantError(t, http.StatusBadRequest, "invalid_argument")
		}
	}
	if after := s.Status(t).Revision; after != before {
		t.Errorf("requests for the empty key moved the revision from %d to %d", before, after)
	}
}

// TestKVPathKeys: a key in the path is the escaped path after /v1/kv/,
// percent-decoded, so "a%2Fb" and "a//b" are distinct keys and nothing
// is cleaned.
func TestKVPathKeys(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	tests := []struct {
		path string
		key  string
	}{
		{"/v1/kv/a%2Fb", "a/b"},
		{"/v1/kv/a//b", "a//b"},
		{"/v1/kv/a/b/", "a/b/"},
		{"/v1/kv//a", "/a"},
		{"/v1/kv/a/./b", "a/./b"},
		{"/v1/kv/a/../b", "a/../b"},
		{"/v1/kv/sp%20ace", "sp ace"},
		{"/v1/kv/q%3Fx%23y", "q?x#y"},
		{"/v1/kv/pct%2541", "pct%41"},
		{"/v1/kv/%E2%82%AC", "€"},
	}
	for i, tt := range tests {
		s.Do(t, "PUT", tt.path, []byte(strconv.Itoa(i))).Want(t, http.StatusOK)
	}
	for i, tt := range tests {
		var g client.GetResponse
		s.Do(t, "GET", tt.path, nil).Ok(t, http.StatusOK, &g)
		if e2e.KeyOf(&g.Kv) != tt.key || e2e.ValueOf(&g.Kv) != strconv.Itoa(i) {
			t.Errorf("GET %s = %s, want key %q with value %d", tt.path, e2e.KVString(&g.Kv), tt.key, i)
		}
	}
	// Two spellings of one key.
	var g client.GetResponse
	s.Do(t, "GET", "/v1/kv/a%2F%2Fb", nil).Ok(t, http.StatusOK, &g)
	if e2e.KeyOf(&g.Kv) != "a//b" || e2e.ValueOf(&g.Kv) != "1" {
		t.Errorf("GET /v1/kv/a%%2F%%2Fb = %s, want the key a//b written as /v1/kv/a//b", e2e.KVString(&g.Kv))
	}
	var l client.ListResponse
	s.Do(t, "GET", "/v1/kv", nil).Ok(t, http.StatusOK, &l)
	if l.Count != int64(len(tests)) {
		t.Errorf("GET /v1/kv: count %d, want %d distinct keys", l.Count, len(tests))
	}
}

// TestKVBase64Twins: bytes that are not UTF-8 come back as the *_base64
// twin, never next to the plain field, and requests accept either form.
func TestKVBase64Twins(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	tests := []struct {
		name       string
		key, value string
	}{
		{"utf8", "plain", "text ü \u2028"},
		{"binary value", "bv", "\xfe\xff"},
		{"binary key", "bk\xff", "text"},
		{"both binary", "\xc3\x28", "\x80"},
		{"NUL and control bytes are UTF-8", "nul\x00", "\x00\x01\x1f"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s.Do(t, "PUT", e2e.KeyPath(tt.key), []byte(tt.value)).Want(t, http.StatusOK)
			r := s.Do(t, "GET", e2e.KeyPath(tt.key), nil).Want(t, http.StatusOK)
			var body struct {
				KV map[string]any `json:"kv"`
			}
			r.Decode(t, &body)
			checkTwin(t, r.Req, body.KV, "key", tt.key)
			checkTwin(t, r.Req, body.KV, "value", tt.value)

			r = s.Do(t, "GET", "/v1/kv?key_base64="+url.QueryEscape(base64.StdEncoding.EncodeToString([]byte(tt.key))), nil)
			var l struct {
				KVs []map[string]any `json:"kvs"`
			}
			r.Ok(t, http.StatusOK, &l)
			if len(l.KVs) != 1 {
				t.Fatalf("%s = %s, want the one key", r.Req, r.Body)
			}
			checkTwin(t, r.Req, l.KVs[0], "key", tt.key)
			checkTwin(t, r.Req, l.KVs[0], "value", tt.value)
		})
	}

	// A txn takes either form, and answers with the right one.
	doc := fmt.Sprintf(`{"success":[{"put":{"key_base64":%q,"value_base64":%q,"prev_kv":true}},{"range":{"key_base64":%q}}]}`,
		base64.StdEncoding.EncodeToString([]byte("bk\xff")), base64.StdEncoding.EncodeToString([]byte("\x01\xff")),
		base64.StdEncoding.EncodeToString([]byte("bk\xff")))
	r := s.Txn(t, doc).Want(t, http.StatusOK)
	var res struct {
		Responses []struct {
			Put struct {
				PrevKV map[string]any `json:"prev_kv"`
			} `json:"put"`
			Range struct {
				KVs []map[string]any `json:"kvs"`
			} `json:"range"`
		} `json:"responses"`
	}
	r.Decode(t, &res)
	if len(res.Responses) != 2 || len(res.Responses[1].Range.KVs) != 1 {
		t.Fatalf("%s = %s, want a put and a range of one key", r.Req, r.Body)
	}
	checkTwin(t, r.Req, res.Responses[0].Put.PrevKV, "key", "bk\xff")
	checkTwin(t, r.Req, res.Responses[0].Put.PrevKV, "value", "text")
	checkTwin(t, r.Req, res.Responses[1].Range.KVs[0], "value", "\x01\xff")
	s.Txn(t, `{"success":[{"put":{"key":"x","key_base64":"eA==","value":"v"}}]}`).WantError(t, http.StatusBadRequest, "invalid_argument")
	s.Txn(t, `{"success":[{"put":{"key":"x","value":"v","value_base64":"dg=="}}]}`).WantError(t, http.StatusBadRequest, "invalid_argument")
	s.Txn(t, `{"success":[{"put":{"key_base64":"not base64!","value":"v"}}]}`).WantError(t, http.StatusBadRequest, "invalid_argument")
}

// checkTwin checks that obj carries b as name when b is UTF-8 and as
// name_base64 otherwise, and not the other field.
func checkTwin(t testing.TB, req string, obj map[string]any, name, b string) {
	t.Helper()
	plain, hasPlain := obj[name]
	b64, hasB64 := obj[name+"_base64"]
	if utf8.ValidString(b) {
		if !hasPlain || hasB64 || plain != b {
			t.Errorf("%s: %s = %v, %s_base64 = %v; want %s %q alone", req, name, plain, name, b64, name, b)
		}
		return
	}
	if hasPlain || !hasB64 || b64 != base64.StdEncoding.EncodeToString([]byte(b)) {
		t.Errorf("%s: %s = %v, %s_base64 = %v; want %s_base64 of %q alone", req, name, plain, name, b64, name, b)
	}
}

// TestKVConditional covers If-Match and If-None-Match on PUT, DELETE and
// GET: success, 412 carrying the current kv, and malformed conditions.
func TestKVConditional(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	tests := []struct {
		name    string
		exists  bool // the key exists, at mod revision M, before the request
		method  string
		header  func(m int64) []string
		status  int
		code    string // of the error
		wantKV  bool   // the 412 carries the current kv
		changes bool   // the request makes a revision
	}{
		{name: "put If-Match current", exists: true, method: "PUT", header: ifMatch(0), status: 200, changes: true},
		{name: "put If-Match weak current", exists: true, method: "PUT", header: func(m int64) []string { return []string{"If-Match", fmt.Sprintf(`W/"%d"`, m)} }, status: 200, changes: true},
		{name: "put If-Match stale", exists: true, method: "PUT", header: ifMatch(-1), status: 412, code: "precondition_failed", wantKV: true},
		{name: "put If-Match future", exists: true, method: "PUT", header: ifMatch(+5), status: 412, code: "precondition_failed", wantKV: true},
		{name: "put If-Match missing key", method: "PUT", header: ifMatch(0), status: 412, code: "precondition_failed"},
		{name: "put If-Match star", exists: true, method: "PUT", header: fixed("If-Match", "*"), status: 200, changes: true},
		{name: "put If-Match star missing key", method: "PUT", header: fixed("If-Match", "*"), status: 412, code: "precondition_failed"},
		{name: "put If-None-Match star new key", method: "PUT", header: fixed("If-None-Match", "*"), status: 200, changes: true},
		{name: "put If-None-Match star existing", exists: true, method: "PUT", header: fixed("If-None-Match", "*"), status: 412, code: "precondition_failed", wantKV: true},
		{name: "put If-Match unquoted", exists: true, method: "PUT", header: fixed("If-Match", "5"), status: 400, code: "invalid_argument"},
		{name: "put If-Match not a revision", exists: true, method: "PUT", header: fixed("If-Match", `"abc"`), status: 400, code: "invalid_argument"},
		{name: "put If-None-Match tag", exists: true, method: "PUT", header: fixed("If-None-Match", `"5"`), status: 400, code: "invalid_argument"},
		{name: "put both conditions", exists: true, method: "PUT", header: func(m int64) []string {
			return []string{"If-Match", fmt.Sprintf(`"%d"`, m), "If-None-Match", "*"}
		}, status: 400, code: "invalid_argument"},
		{name: "delete If-Match current", exists: true, method: "DELETE", header: ifMatch(0), status: 200, changes: true},
		{name: "delete If-Match stale", exists: true, method: "DELETE", header: ifMatch(-1), status: 412, code: "precondition_failed", wantKV: true},
		{name: "delete If-Match missing key", method: "DELETE", header: ifMatch(0), status: 412, code: "precondition_failed"},
		{name: "delete If-None-Match", exists: true, method: "DELETE", header: fixed("If-None-Match", "*"), status: 400, code: "invalid_argument"},
		{name: "get If-None-Match current", exists: true, method: "GET", header: func(m int64) []string { return []string{"If-None-Match", fmt.Sprintf(`"%d"`, m)} }, status: 304},
		{name: "get If-None-Match stale", exists: true, method: "GET", header: func(m int64) []string { return []string{"If-None-Match", fmt.Sprintf(`"%d"`, m-1)} }, status: 200},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := fmt.Sprintf("cond/%d", i)
			var mod int64 = 1
			if tt.exists {
				s.Put(t, key, "old")
				mod = s.Put(t, key, "current") // version 2, so a stale tag names a real revision
			}
			before := s.Status(t).Revision
			r := s.Do(t, tt.method, e2e.KeyPath(key), []byte("new"), tt.header(mod)...)
			if tt.status >= 400 {
				e := r.WantError(t, tt.status, tt.code)
				if tt.status == http.StatusPreconditionFailed {
					switch {
					case tt.wantKV && (e.Kv == nil || e2e.ValueOf(e.Kv) != "current" || e.Kv.ModRevision != mod):
						t.Errorf("%s = %s, want error.kv with value \"current\" at mod revision %d", r.Req, r.Body, mod)
					case tt.wantKV && r.Header.Get("ETag") != fmt.Sprintf(`"%d"`, mod):
						t.Errorf("%s: ETag = %q, want the current \"%d\"", r.Req, r.Header.Get("ETag"), mod)
					case !tt.wantKV && e.Kv != nil:
						t.Errorf("%s = %s, want no kv for a missing key", r.Req, r.Body)
					}
				}
			} else {
				r.Want(t, tt.status)
			}
			after := s.Status(t).Revision
			if got := after != before; got != tt.changes {
				t.Errorf("%s moved the revision from %d to %d, want a new revision: %v", r.Req, before, after, tt.changes)
			}
			if tt.changes && tt.method == "PUT" {
				if kv := s.Get(t, key); e2e.ValueOf(&kv) != "new" || kv.ModRevision != after {
					t.Errorf("after %s: %s, want value \"new\" at mod revision %d", r.Req, e2e.KVString(&kv), after)
				}
				if got := r.Header.Get("ETag"); got != fmt.Sprintf(`"%d"`, after) {
					t.Errorf("%s: ETag = %s, want \"%d\"", r.Req, got, after)
				}
			}
		})
	}
}

func ifMatch(delta int64) func(int64) []string {
	return func(m int64) []string { return []string{"If-Match", fmt.Sprintf(`"%d"`, m+delta)} }
}

func fixed(name, value string) func(int64) []string {
	return func(int64) []string { return []string{name, value} }
}

// TestKVPutOptions covers ignore_value, ignore_lease, lease and prev_kv on
// PUT, and their errors.
func TestKVPutOptions(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	var l client.LeaseResponse
	s.Do(t, "POST", "/v1/leases", []byte(`{"ttl":600}`)).Ok(t, http.StatusCreated, &l)
	s.Put(t, "leased", "v")
	s.Do(t, "PUT", fmt.Sprintf("/v1/kv/leased?lease=%d", l.Id), []byte("v1")).Want(t, http.StatusOK)

	tests := []struct {
		name   string
		path   string
		body   string
		status int
		code   string
		want   string // the key after, as KVString shows it, without revisions: "value lease version"
	}{
		{"ignore_value keeps the value", fmt.Sprintf("/v1/kv/leased?ignore_value=true&lease=%d", l.Id), "", 200, "", fmt.Sprintf("v1 %d 3", l.Id)},
		{"ignore_lease keeps the lease", "/v1/kv/leased?ignore_lease=true", "v2", 200, "", fmt.Sprintf("v2 %d 4", l.Id)},
		{"both ignores", "/v1/kv/leased?ignore_lease=1&ignore_value=1", "", 200, "", fmt.Sprintf("v2 %d 5", l.Id)},
		// As in etcd, ignore_value alone takes the request's lease, none.
		{"ignore_value alone detaches", "/v1/kv/leased?ignore_value=true", "", 200, "", "v2 0 6"},
		{"ignore_value on a missing key", "/v1/kv/nokey?ignore_value=true", "", 404, "key_not_found", ""},
		{"ignore_lease on a missing key", "/v1/kv/nokey?ignore_lease=true", "x", 404, "key_not_found", ""},
		{"ignore_value with a value", "/v1/kv/leased?ignore_value=true", "x", 400, "invalid_argument", ""},
		{"ignore_lease with a lease", fmt.Sprintf("/v1/kv/leased?ignore_lease=true&lease=%d", l.Id), "x", 400, "invalid_argument", ""},
		{"unknown lease", "/v1/kv/leased?lease=424242", "x", 404, "lease_not_found", ""},
		{"lease not a number", "/v1/kv/leased?lease=abc", "x", 400, "invalid_argument", ""},
		{"prev_kv not a boolean", "/v1/kv/leased?prev_kv=maybe", "x", 400, "invalid_argument", ""},
		{"ignore_value not a boolean", "/v1/kv/leased?ignore_value=yes", "", 400, "invalid_argument", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := s.Status(t).Revision
			r := s.Do(t, "PUT", tt.path, []byte(tt.body))
			if tt.status != 200 {
				r.WantError(t, tt.status, tt.code)
				if after := s.Status(t).Revision; after != before {
					t.Errorf("%s failed but moved the revision from %d to %d", r.Req, before, after)
				}
				return
			}
			rev := r.Want(t, 200).Revision(t)
			kv := s.Get(t, "leased")
			if got := fmt.Sprintf("%s %d %d", e2e.ValueOf(&kv), kv.Lease, kv.Version); got != tt.want || kv.ModRevision != rev {
				t.Errorf("after %s: %s, want value, lease, version %q at mod revision %d", r.Req, e2e.KVString(&kv), tt.want, rev)
			}
		})
	}
}

// TestKVDelete covers DELETE of a key and of ranges: counts, prev_kvs,
// one revision for a whole range, and no revision when nothing goes.
func TestKVDelete(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	for _, k := range []string{"d/1", "d/2", "d/3", "e", "f", "g", "h"} {
		s.Put(t, k, "v-"+k)
	}

	tests := []struct {
		name    string
		path    string
		deleted []string // keys deleted, in key order
		prevKV  bool
	}{
		{"single key", "/v1/kv/e", []string{"e"}, false},
		{"single key with prev_kv", "/v1/kv/f?prev_kv=true", []string{"f"}, true},
		{"missing key", "/v1/kv/zz", nil, false},
		{"missing key with prev_kv", "/v1/kv/zz?prev_kv=true", nil, true},
		{"prefix", "/v1/kv?key=d/&prefix=true&prev_kv=true", []string{"d/1", "d/2", "d/3"}, true},
		{"prefix matching nothing", "/v1/kv?key=d/&prefix=true", nil, false},
		{"range_end", "/v1/kv?key=g&range_end=h", []string{"g"}, false},
		{"from_key", "/v1/kv?key=h&from_key=true&prev_kv=1", []string{"h"}, true},
		{"key alone", "/v1/kv?key=nothing", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := s.Status(t).Revision
			var res client.DeleteResponse
			r := s.Do(t, "DELETE", tt.path, nil).Ok(t, http.StatusOK, &res)
			wantRev := before
			if len(tt.deleted) > 0 {
				wantRev++ // however many keys go, they go in one revision
			}
			if res.Header.Revision != wantRev || res.Deleted != int64(len(tt.deleted)) {
				t.Errorf("%s = %s, want deleted %d at revision %d", r.Req, r.Body, len(tt.deleted), wantRev)
			}
			if after := s.Status(t).Revision; after != wantRev {
				t.Errorf("after %s the revision is %d, want %d", r.Req, after, wantRev)
			}
			var raw map[string]json.RawMessage
			r.Decode(t, &raw)
			_, hasPrev := raw["prev_kvs"]
			if hasPrev != tt.prevKV && (tt.prevKV || len(tt.deleted) > 0) {
				t.Errorf("%s = %s: prev_kvs present %v, want %v", r.Req, r.Body, hasPrev, tt.prevKV)
			}
			if tt.prevKV {
				var got []string
				for _, kv := range e2e.Deref(res.PrevKvs) {
					got = append(got, e2e.KeyOf(&kv))
					if e2e.ValueOf(&kv) != "v-"+e2e.KeyOf(&kv) {
						t.Errorf("%s: prev_kv %s, want value %q", r.Req, e2e.KVString(&kv), "v-"+e2e.KeyOf(&kv))
					}
				}
				if !slices.Equal(got, tt.deleted) {
					t.Errorf("%s: prev_kvs keys %q, want %q", r.Req, got, tt.deleted)
				}
			}
			for _, k := range tt.deleted {
				s.Do(t, "GET", e2e.KeyPath(k), nil).WantError(t, http.StatusNotFound, "key_not_found")
				var g client.GetResponse
				s.Do(t, "GET", fmt.Sprintf("%s?revision=%d", e2e.KeyPath(k), before), nil).Ok(t, http.StatusOK, &g)
			}
		})
	}

	for _, tt := range []struct{ name, path string }{
		{"no key", "/v1/kv"},
		{"prefix without key", "/v1/kv?prefix=true&range_end=b"},
		{"range_end without key", "/v1/kv?range_end=b"},
		{"two selectors", "/v1/kv?key=a&prefix=true&from_key=true"},
		{"empty range_end", "/v1/kv?key=a&range_end="},
	} {
		t.Run("error/"+tt.name, func(t *testing.T) {
			s.Do(t, "DELETE", tt.path, nil).WantError(t, http.StatusBadRequest, "invalid_argument")
		})
	}
	t.Run("error/If-Match on a range", func(t *testing.T) {
		s.Put(t, "r/1", "v")
		s.Do(t, "DELETE", "/v1/kv?key=r/&prefix=true", nil, "If-Match", `"1"`).WantError(t, http.StatusBadRequest, "invalid_argument")
		s.Get(t, "r/1")
	})
}
