package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/internal/wiretest"
	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"

	"github.com/httpkv/httpkv/wire"
)

func TestImport(t *testing.T) {
	h, _ := newTestHandler(t, Config{})
	mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/app/same", "1")
	mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/app/old", "1")
	mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/app/gone", "1")
	body := `{"header":{"revision":7},"count":3}

{"key":"app/same","value":"1","mod_revision":2,"lease":0}
{"key_base64":"YXBwL/8=","value_base64":"/w=="}
{"key":"app/old","value":"2"}
`
	rec := mustServe(t, h, http.StatusOK, "POST", "/v1/import?key=app/&prefix=true&mode=replace&dry_run=true", body)
	if !strings.Contains(rec.Body.String(), `"created":1,"deleted":1,"header":{"revision":4},"keys":{"created_base64":["YXBwL/8="],"deleted":["app/gone"],"updated":["app/old"]},"unchanged":1,"updated":1}`) {
		t.Fatalf("dry run = %s", rec.Body)
	}
	if wiretest.Value(getKV(t, h, "app/old")) != "1" {
		t.Fatal("a dry run changed app/old")
	}
	rec = mustServe(t, h, http.StatusOK, "POST", "/v1/import?key=app/&prefix=true&mode=replace", body, "If-Match", `"4"`)
	var res wire.RewriteResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil || res.Header.Revision != 5 || rec.Header().Get("X-Revision") != "5" {
		t.Fatalf("import = %s", rec.Body)
	}
	if got := listKeys(t, h, "key=app/&prefix=true"); strings.Join(got, " ") != "app/old app/same app/\xff" {
		t.Fatalf("after the import: %q", got)
	}
	// Nothing differs now: no revision.
	rec = mustServe(t, h, http.StatusOK, "POST", "/v1/import?key=app/&prefix=true", body)
	if !strings.Contains(rec.Body.String(), `"header":{"revision":5}`) || !strings.Contains(rec.Body.String(), `"unchanged":3`) {
		t.Fatalf("an import that changes nothing = %s", rec.Body)
	}
}

// TestImportRefused: every bad body, parameter or condition is a clear
// error naming the line, and changes nothing.
func TestImportRefused(t *testing.T) {
	h, _ := newTestHandler(t, Config{MaxImportBytes: 200})
	mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/app/a", "1")
	ok := `{"key":"app/b","value":"2"}` + "\n"
	for _, tc := range []struct {
		name, query, body string
		header            []string
		status            int
		code, says        string
	}{
		{"not JSON", "", ok + `{"key":"app/c",` + "\n", nil, 400, "invalid_argument", "line 2: not a JSON object"},
		{"an array", "", ok + `["app/c","v"]`, nil, 400, "invalid_argument", "line 2: not a JSON object with key and value: it is array"},
		{"null", "", `null`, nil, 400, "invalid_argument", "line 1: not a JSON object"},
		{"no key", "", ok + `{"value":"v"}`, nil, 400, "invalid_argument", "line 2: no key"},
		{"no value", "", ok + `{"key":"app/c"}`, nil, 400, "invalid_argument", "line 2: no value"},
		{"a value that is not a string", "", `{"key":"app/c","value":{"a":1}}`, nil, 400, "invalid_argument", `line 1: not a JSON object with key and value: field "value" must be a string`},
		{"both forms", "", `{"key":"app/c","key_base64":"YQ==","value":"v"}`, nil, 400, "invalid_argument", "line 1: give key or key_base64, not both"},
		{"bad base64", "", `{"key":"app/c","value_base64":"!!"}`, nil, 400, "invalid_argument", "line 1: value_base64 is not valid base64"},
		{"not UTF-8", "", "{\"key\":\"app/\xff\",\"value\":\"v\"}", nil, 400, "invalid_argument", "line 1:"},
		{"an empty key", "", `{"key":"","value":"v"}`, nil, 400, "invalid_argument", "line 1: the key is empty"},
		{"outside the scope", "?key=app/&prefix=true", ok + `{"key":"other","value":"v"}`, nil, 400, "invalid_argument", `line 2: the key "other" is outside the range the import names (the prefix "app/")`},
		{"a key twice", "", ok + "\n" + ok, nil, 400, "invalid_argument", `lines 1 and 3 both give the key "app/b"`},
		{"a header later", "", ok + `{"header":{"revision":1}}`, nil, 400, "invalid_argument", "line 2: no key"},
		{"a bad mode", "?mode=overwrite", ok, nil, 400, "invalid_argument", "mode must be merge or replace"},
		{"a bad If-Match", "", ok, []string{"If-Match", "*"}, 400, "invalid_argument", "revision in double quotes"},
		{"If-None-Match", "", ok, []string{"If-None-Match", "*"}, 400, "invalid_argument", "If-Match only"},
		{"a changed range", "", ok, []string{"If-Match", `"1"`}, 412, "precondition_failed", "after revision 1"},
		{"If-Match in the future", "", ok, []string{"If-Match", `"9"`}, 400, "future_revision", "9"},
		{"too large", "", strings.Repeat(ok, 10), nil, 413, "request_too_large", "--max-import-bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := serve(t, h, "POST", "/v1/import"+tc.query, tc.body, tc.header...)
			if rec.Code != tc.status || errorCode(t, rec) != tc.code || !strings.Contains(errorMessage(t, rec), tc.says) {
				t.Fatalf("import %q = %d %s, want %d %s saying %q", tc.body, rec.Code, rec.Body, tc.status, tc.code, tc.says)
			}
			if got := listKeys(t, h, "key=%00&from_key=true"); strings.Join(got, " ") != "app/a" {
				t.Fatalf("a refused import changed the store: %q", got)
			}
		})
	}
}

// TestImportBodyWithoutLength: a body sent without Content-Length is
// bounded as it is read.
func TestImportBodyWithoutLength(t *testing.T) {
	h, _ := newTestHandler(t, Config{MaxImportBytes: 100})
	// A reader that is not a strings.Reader: httptest leaves its length
	// unknown (-1), as a chunked body's.
	req := httptest.NewRequest("POST", "/v1/import", io.MultiReader(strings.NewReader(strings.Repeat(`{"key":"k","value":"v"}`+"\n", 10))))
	if req.ContentLength != -1 {
		t.Fatalf("the request has Content-Length %d", req.ContentLength)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.Body.String(), "--max-import-bytes") {
		t.Fatalf("a chunked import over the bound = %d %s, want 413", rec.Code, rec.Body)
	}
	if got := listKeys(t, h, "key=%00&from_key=true"); len(got) != 0 {
		t.Fatalf("a refused import changed the store: %q", got)
	}
}

func TestRestore(t *testing.T) {
	h, _ := newTestHandler(t, Config{})
	mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/r/a", "1")
	mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/r/b", "1") // revision 3
	mustServe(t, h, http.StatusOK, "DELETE", "/v1/kv/r/a", "")
	putTTL(t, h, "r/b", "2", 60)
	mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/r/c", "1")
	rec := mustServe(t, h, http.StatusOK, "POST", "/v1/restore", `{"key":"r/","prefix":true,"revision":3}`)
	var res wire.RewriteResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil || res.Created != 1 || res.Updated != 1 || res.Deleted != 1 || res.Header.Revision != 7 {
		t.Fatalf("restore = %s", rec.Body)
	}
	if kv := getKV(t, h, "r/b"); wiretest.Value(kv) != "1" || kv.Lease != 0 {
		t.Fatalf("r/b restored as %+v, want 1 without a lease", kv)
	}
	for _, tc := range []struct {
		body   string
		status int
		code   string
	}{
		{`{"key":"r/","prefix":true}`, 400, "invalid_argument"},
		{`{"key":"r/","prefix":true,"revision":0}`, 400, "invalid_argument"},
		{`{"prefix":true,"revision":3}`, 400, "invalid_argument"},
		{`{"key":"r/","prefix":true,"from_key":true,"revision":3}`, 400, "invalid_argument"},
		{`{"key":"r/","prefix":true,"revision":3,"dryrun":true}`, 400, "invalid_argument"},
		{`{"key":"r/","prefix":true,"revision":99}`, 400, "future_revision"},
	} {
		if rec := serve(t, h, "POST", "/v1/restore", tc.body); rec.Code != tc.status || errorCode(t, rec) != tc.code {
			t.Errorf("restore %s = %d %s, want %d %s", tc.body, rec.Code, rec.Body, tc.status, tc.code)
		}
	}
	if got := listKeys(t, h, "key=r/&prefix=true"); strings.Join(got, " ") != "r/a r/b" {
		t.Fatalf("after the refused restores: %q", got)
	}
}

// FuzzImportBody: whatever the body, reading it either fails with a
// client error or gives sorted entries, each key once, in the scope.
func FuzzImportBody(f *testing.F) {
	f.Add([]byte(`{"header":{"revision":1},"count":1}` + "\n" + `{"key":"a/b","value":"v"}`))
	f.Add([]byte(`{"key_base64":"YS8=","value_base64":"/w=="}` + "\n\n" + `{"key":"a/c","value":""}`))
	f.Add([]byte("{\"key\":\"a/\xff\",\"value\":\"v\"}"))
	f.Add([]byte(`[1]` + "\n" + `null`))
	scope := keyrange.Prefix([]byte("a/"))
	f.Fuzz(func(t *testing.T, body []byte) {
		e, err := readImport(bytes.NewReader(body), scope)
		if err != nil {
			if code, _, ok := kv.CodeOf(err); !ok || code != kv.CodeInvalidArgument {
				t.Fatalf("readImport(%q) = %v, want an invalid argument", body, err)
			}
			return
		}
		var prev []byte
		for i := range e.Len() {
			k, _ := e.At(i)
			if !scope.Contains(k) || (i > 0 && bytes.Compare(prev, k) >= 0) {
				t.Fatalf("readImport(%q): entry %d %q out of scope or order (after %q)", body, i, k, prev)
			}
			prev = k
		}
	})
}
