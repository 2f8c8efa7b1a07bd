package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/internal/wiretest"
	"github.com/httpkv/httpkv/wire"
)

const (
	mergeType = "application/merge-patch+json"
	jsonPatch = "application/json-patch+json"
)

func TestPatchKey(t *testing.T) {
	h, _ := newTestHandler(t, Config{})
	lease := putTTL(t, h, "conf", `{"a": 1, "b": {"c": 2}}`, 60)

	rec := mustServe(t, h, http.StatusOK, "PATCH", "/v1/kv/conf", `{"b":{"d":3},"a":null}`, "Content-Type", mergeType)
	var got wire.GetResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if wiretest.Value(got.KV) != `{"b":{"c":2,"d":3}}` || got.KV.Lease != lease || got.KV.Version != 2 || got.Header.Revision != got.KV.ModRevision {
		t.Fatalf("merge patch answered %s, want {b:{c:2,d:3}} at version 2 with lease %d", rec.Body, lease)
	}
	if rec.Header().Get("ETag") != etag(got.KV.ModRevision) {
		t.Errorf("ETag %q, want %q", rec.Header().Get("ETag"), etag(got.KV.ModRevision))
	}
	if kv := getKV(t, h, "conf"); wiretest.Value(kv) != `{"b":{"c":2,"d":3}}` || kv.Lease != lease {
		t.Fatalf("the key after the patch: %+v", kv)
	}

	// A JSON Patch with a charset parameter, under If-Match.
	rec = mustServe(t, h, http.StatusOK, "PATCH", "/v1/kv/conf", `[{"op":"test","path":"/b/c","value":2},{"op":"add","path":"/e","value":[1]}]`,
		"Content-Type", jsonPatch+"; charset=utf-8", "If-Match", etag(got.KV.ModRevision))
	if kv := getKV(t, h, "conf"); wiretest.Value(kv) != `{"b":{"c":2,"d":3},"e":[1]}` {
		t.Fatalf("after the JSON Patch: %s, answered %s", wiretest.Value(kv), rec.Body)
	}

	// A merge patch creates a missing key, without a lease.
	mustServe(t, h, http.StatusOK, "PATCH", "/v1/kv/new", `{"x":"<y>"}`, "Content-Type", mergeType)
	if kv := getKV(t, h, "new"); wiretest.Value(kv) != `{"x":"<y>"}` || kv.Lease != 0 || kv.Version != 1 {
		t.Fatalf("a merge patch of a missing key made %+v", kv)
	}
}

// TestPatchKeyRefused: every refusal is a clear error and changes
// nothing.
func TestPatchKeyRefused(t *testing.T) {
	h, _ := newTestHandler(t, Config{MaxRequestBytes: 256})
	mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/conf", `{"a":1}`)
	mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/text", `not json`)
	for _, tc := range []struct {
		name, key, body string
		header          []string
		status          int
		code, says      string
	}{
		{"a patch that is not JSON", "conf", `{"a":`, []string{"Content-Type", mergeType}, 400, "invalid_argument", "not JSON"},
		{"a JSON Patch that is not an array", "conf", `{"op":"add"}`, []string{"Content-Type", jsonPatch}, 400, "invalid_argument", "JSON Patch"},
		{"a value that is not JSON", "text", `{"a":1}`, []string{"Content-Type", mergeType}, 409, "patch_failed", "not JSON"},
		{"a missing path", "conf", `[{"op":"replace","path":"/x/y","value":1}]`, []string{"Content-Type", jsonPatch}, 409, "patch_failed", "missing"},
		{"a test that fails", "conf", `[{"op":"test","path":"/a","value":2}]`, []string{"Content-Type", jsonPatch}, 409, "patch_failed", "/a"},
		{"a JSON Patch of a missing key", "missing", `[{"op":"add","path":"/a","value":1}]`, []string{"Content-Type", jsonPatch}, 404, "key_not_found", "missing"},
		{"a result over the bound", "conf", `{"b":"` + strings.Repeat("x", 245) + `"}`, []string{"Content-Type", mergeType}, 409, "patch_failed", "--max-request-bytes"},
		{"a body over the bound", "conf", `{"b":"` + strings.Repeat("x", 300) + `"}`, []string{"Content-Type", mergeType}, 413, "request_too_large", "256"},
		{"plain JSON", "conf", `{"a":2}`, []string{"Content-Type", "application/json"}, 415, "unsupported_media_type", "merge-patch"},
		{"no content type", "conf", `{"a":2}`, nil, 415, "unsupported_media_type", "merge-patch"},
		{"If-Match of another version", "conf", `{"a":2}`, []string{"Content-Type", mergeType, "If-Match", `"1"`}, 412, "precondition_failed", "ETag"},
		{"If-Match of a missing key", "missing", `{"a":2}`, []string{"Content-Type", mergeType, "If-Match", "*"}, 412, "precondition_failed", "does not exist"},
		{"If-None-Match", "conf", `{"a":2}`, []string{"Content-Type", mergeType, "If-None-Match", "*"}, 400, "invalid_argument", "If-Match only"},
		{"a query parameter", "conf?prev_kv=true", `{"a":2}`, []string{"Content-Type", mergeType}, 400, "invalid_argument", "prev_kv"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := serve(t, h, "PATCH", "/v1/kv/"+tc.key, tc.body, tc.header...)
			if rec.Code != tc.status || errorCode(t, rec) != tc.code || !strings.Contains(errorMessage(t, rec), tc.says) {
				t.Fatalf("PATCH %s %s = %d %s, want %d %s saying %q", tc.key, tc.body, rec.Code, rec.Body, tc.status, tc.code, tc.says)
			}
			if tc.status == 412 && tc.key == "conf" && !strings.Contains(rec.Body.String(), `"kv":{"key":"conf"`) {
				t.Errorf("a 412 without the key as it is: %s", rec.Body)
			}
			if kv := getKV(t, h, "conf"); wiretest.Value(kv) != `{"a":1}` || kv.ModRevision != 2 {
				t.Errorf("conf after the refusal: %+v", kv)
			}
			if kv := getKV(t, h, "text"); wiretest.Value(kv) != `not json` || kv.ModRevision != 3 {
				t.Errorf("text after the refusal: %+v", kv)
			}
			serve(t, h, "GET", "/v1/kv/missing", "")
			if rec := serve(t, h, "GET", "/v1/kv/missing", ""); rec.Code != 404 {
				t.Errorf("a refused patch created the missing key: %s", rec.Body)
			}
		})
	}
}

// TestPatchKeyBoundsItsWork: a patch being applied counts against the
// bytes in flight, so that many large patches at once are refused rather
// than held.
func TestPatchKeyBoundsItsWork(t *testing.T) {
	h, _ := newTestHandler(t, Config{MaxRequestBytes: 4096, MaxInflightRequestBytes: 8192})
	value := fmt.Sprintf(`{"a":"%s"}`, strings.Repeat("x", 2000))
	mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/big", value)
	rec := serve(t, h, "PATCH", "/v1/kv/big", `{"b":1}`, "Content-Type", mergeType)
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "1" {
		t.Fatalf("a patch of a 2 KB value with 8 KB in flight allowed = %d %s, want 429", rec.Code, rec.Body)
	}
	if kv := getKV(t, h, "big"); wiretest.Value(kv) != value {
		t.Fatalf("a refused patch changed the key")
	}
}
