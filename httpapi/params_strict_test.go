package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/openapi"

	"github.com/httpkv/httpkv/wire"
)

// errorMessage returns the message of an error answer.
func errorMessage(tb testing.TB, rec *httptest.ResponseRecorder) string {
	tb.Helper()
	var e wire.ErrorResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
		tb.Fatalf("error body %q: %v", rec.Body, err)
	}
	return e.Error.Message
}

// TestQueryParamsDocumented sends an unknown query parameter to every
// operation of the OpenAPI document and checks that it is refused, and
// that the parameters the refusal lists are exactly the operation's
// documented query parameters: the list each handler declares and the
// document cannot drift apart.
func TestQueryParamsDocumented(t *testing.T) {
	h, _ := newTestHandler(t, Config{})
	doc, err := openapi.Load()
	if err != nil {
		t.Fatal(err)
	}
	pathValues := strings.NewReplacer("{key}", "k", "{id}", "1", "{name}", "n", "{role}", "r", "{stream}", "s", "{watch_id}", "1")
	n := 0
	for path, item := range doc.Paths.Map() {
		if !strings.HasPrefix(path, "/v1/") {
			continue
		}
		for method, op := range item.Operations() {
			var documented []string
			for _, p := range op.Parameters {
				if p.Value.In == "query" {
					documented = append(documented, p.Value.Name)
				}
			}
			slices.Sort(documented)
			target := pathValues.Replace(path) + "?zzz_unknown=1"
			rec := serve(t, h, method, target, "")
			if rec.Code != http.StatusBadRequest || errorCode(t, rec) != "invalid_argument" {
				t.Errorf("%s %s = %d %s, want 400 invalid_argument", method, target, rec.Code, rec.Body)
				continue
			}
			msg := errorMessage(t, rec)
			if !strings.Contains(msg, `"zzz_unknown"`) {
				t.Errorf("%s %s: message %q does not name the parameter", method, target, msg)
			}
			var accepted []string
			if _, list, ok := strings.Cut(msg, " takes "); ok && list != "no query parameters" {
				accepted = strings.Split(list, ", ")
			}
			slices.Sort(accepted)
			if !slices.Equal(accepted, documented) {
				t.Errorf("%s %s accepts %q, but its OpenAPI operation documents %q", method, path, accepted, documented)
			}
			n++
		}
	}
	if n < 40 {
		t.Errorf("checked %d operations, want every /v1 operation (40 or more)", n)
	}
}

// TestUnknownQueryParam checks what a refused parameter's message says.
func TestUnknownQueryParam(t *testing.T) {
	h, _ := newTestHandler(t, Config{})
	tests := []struct {
		method, target, body string
		want                 string
	}{
		{"GET", "/v1/kv?key=a&prefx=true", "", `unknown query parameter "prefx" (did you mean "prefix"?): GET /v1/kv takes key, `},
		{"PUT", "/v1/kv/a?prev=true", "v", `unknown query parameter "prev" (did you mean "prev_kv"?): PUT /v1/kv/{key} takes lease, ttl, prev_kv, ignore_value, ignore_lease`},
		{"GET", "/v1/kv/app/?prefix=true", "", `GET /v1/kv/{key} reads one key and takes no "prefix": to read a range, use GET /v1/kv?key=app%2F&prefix=true`},
		{"DELETE", "/v1/kv/app/?prefix=true", "", `to delete a range, use DELETE /v1/kv?key=app%2F&prefix=true`},
		{"POST", "/v1/txn?timeout=5s", `{"success":[{"put":{"key":"t","value":"v"}}]}`, `unknown query parameter "timeout": POST /v1/txn takes no query parameters`},
		{"GET", "/v1/history?key=a&limt=5", "", `"limt" (did you mean "limit"?)`},
		{"GET", "/v1/kv?key=a&zebra=1", "", `unknown query parameter "zebra": GET /v1/kv takes`},
	}
	for _, tt := range tests {
		rec := serve(t, h, tt.method, tt.target, tt.body)
		if rec.Code != http.StatusBadRequest || !strings.Contains(errorMessage(t, rec), tt.want) {
			t.Errorf("%s %s = %d %s, want 400 with %q", tt.method, tt.target, rec.Code, rec.Body, tt.want)
		}
	}
	// Nothing was written by the refused requests.
	if keys := listKeys(t, h, ""); len(keys) != 0 {
		t.Errorf("refused requests wrote %q", keys)
	}
}

// TestAccessTokenParam checks that access_token is a parameter of the
// streams a browser opens only.
func TestAccessTokenParam(t *testing.T) {
	v := url.Values{"access_token": {"t"}}
	for _, tt := range []struct {
		target string
		ok     bool
	}{
		{"/v1/watch", true},
		{"/v1/elections/n/observe", true},
		{"/v1/kv", false},
		{"/v1/history", false},
	} {
		r := httptest.NewRequest("GET", tt.target, nil)
		if err := unknownParam(r, v, watchParams); (err == nil) != tt.ok {
			t.Errorf("GET %s?access_token=t: unknownParam = %v, want accepted %v", tt.target, err, tt.ok)
		}
	}
}

func TestDidYouMean(t *testing.T) {
	known := []string{"key", "prefix", "from_key", "range_end", "limit", "revision", "put"}
	for _, tt := range []struct{ name, want string }{
		{"prefx", "prefix"}, {"fromkey", "from_key"}, {"rangeend", "range_end"}, {"revison", "revision"},
		{"putt", "put"}, {"ky", "key"}, {"zebra", ""}, {"x", ""},
	} {
		got := wire.DidYouMean(tt.name, known)
		want := ""
		if tt.want != "" {
			want = ` (did you mean "` + tt.want + `"?)`
		}
		if got != want {
			t.Errorf("didYouMean(%q) = %q, want %q", tt.name, got, want)
		}
	}
}

// TestMethodNotAllowed checks that a 405 lists the methods the path has,
// in Allow and in the message, subrouter paths included.
func TestMethodNotAllowed(t *testing.T) {
	h, _ := newTestHandler(t, Config{})
	for _, tt := range []struct{ method, path, allow string }{
		{"POST", "/v1/kv/a", "GET, PUT, PATCH, DELETE"},
		{"PATCH", "/v1/kv", "GET, DELETE"},
		{"PUT", "/v1/leases", "GET, POST"},
		{"GET", "/v1/txn", "POST"},
		{"POST", "/health", "GET"},
	} {
		rec := serve(t, h, tt.method, tt.path, "")
		if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != tt.allow ||
			!strings.HasSuffix(errorMessage(t, rec), "use "+tt.allow) {
			t.Errorf("%s %s = %d (Allow %q) %s, want 405 with Allow %q", tt.method, tt.path, rec.Code, rec.Header().Get("Allow"), rec.Body, tt.allow)
		}
	}
}
