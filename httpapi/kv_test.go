package httpapi

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/internal/wiretest"
	"github.com/httpkv/httpkv/wire"
)

func TestPathKey(t *testing.T) {
	tests := []struct {
		name    string
		target  string // the request target as a client sends it
		want    string
		wantErr bool
	}{
		{"plain", "/v1/kv/abc", "abc", false},
		{"escaped slash", "/v1/kv/a%2Fb", "a/b", false},
		{"lower-case escape", "/v1/kv/a%2fb", "a/b", false},
		{"slashes kept", "/v1/kv/a/b//c", "a/b//c", false},
		{"trailing slash", "/v1/kv/a/", "a/", false},
		{"leading slash", "/v1/kv//a", "/a", false},
		{"dots kept", "/v1/kv/a/../b/.", "a/../b/.", false},
		{"escaped percent", "/v1/kv/100%25", "100%", false},
		{"space", "/v1/kv/a%20b", "a b", false},
		{"plus is not a space", "/v1/kv/a+b", "a+b", false},
		{"escaped question mark", "/v1/kv/a%3Fb", "a?b", false},
		{"escaped NUL", "/v1/kv/%00", "\x00", false},
		{"invalid UTF-8", "/v1/kv/%FF%FE", "\xff\xfe", false},
		{"UTF-8", "/v1/kv/%E4%B8%96", "世", false},
		{"empty", "/v1/kv/", "", true},
		{"no key", "/v1/kv", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", tt.target, nil)
			got, err := pathKey(r)
			if tt.wantErr {
				if err == nil || err.code != "invalid_argument" {
					t.Errorf("pathKey(%q) = %q, %v; want an invalid_argument error", tt.target, got, err)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Errorf("pathKey(%q) = %q, %v; want %q", tt.target, got, err, tt.want)
			}
		})
	}
}

// TestPathKeyUnescapedPath covers a request built in process, whose URL
// has a Path but no RawPath: the path is taken literally.
func TestPathKeyUnescapedPath(t *testing.T) {
	for _, key := range []string{"100%", "%zz", "a%2Fb", "a b", "a/b//c"} {
		r := &http.Request{URL: &url.URL{Path: "/v1/kv/" + key}}
		got, err := pathKey(r)
		if err != nil || string(got) != key {
			t.Errorf("pathKey(URL{Path: %q}) = %q, %v; want %q", r.URL.Path, got, err, key)
		}
	}
}

// TestPathKeysThroughRouter puts keys that differ only in how their
// slashes are written and checks they are distinct keys, each read back
// by its own path.
func TestPathKeysThroughRouter(t *testing.T) {
	h, _ := newTestHandler(t, Config{})
	paths := map[string]string{ // path -> key
		"/v1/kv/a%2Fb":      "a/b",
		"/v1/kv/a/b//c":     "a/b//c",
		"/v1/kv/a%2Fb/%2Fc": "a/b//c",
		"/v1/kv/a/b":        "a/b",
		"/v1/kv/%FF":        "\xff",
		"/v1/kv/a%252Fb":    "a%2Fb",
	}
	for path, key := range paths {
		mustServe(t, h, http.StatusOK, "PUT", path, "value of "+path)
		rec := mustServe(t, h, http.StatusOK, "GET", path, "")
		var body wire.GetResponse
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatalf("GET %s: body %q: %v", path, rec.Body, err)
		}
		if wiretest.Key(body.KV) != key {
			t.Errorf("GET %s: key %q, want %q", path, wiretest.Key(body.KV), key)
		}
		if body.KV.Value != "value of "+path {
			t.Errorf("GET %s: value %q, want %q", path, body.KV.Value, "value of "+path)
		}
		raw := mustServe(t, h, http.StatusOK, "GET", path+"?raw=true", "")
		if raw.Body.String() != "value of "+path {
			t.Errorf("GET %s?raw=true = %q, want %q", path, raw.Body, "value of "+path)
		}
	}
	got := listKeys(t, h, "")
	want := []string{"a%2Fb", "a/b", "a/b//c", "\xff"}
	if !slices.Equal(got, want) {
		t.Errorf("GET /v1/kv keys = %q, want %q", got, want)
	}

	for _, req := range []struct{ method, target string }{
		{"PUT", "/v1/kv/"}, {"GET", "/v1/kv/"}, {"DELETE", "/v1/kv/"},
	} {
		rec := mustServe(t, h, http.StatusBadRequest, req.method, req.target, "v")
		if code := errorCode(t, rec); code != "invalid_argument" {
			t.Errorf("%s %s: code %q, want invalid_argument", req.method, req.target, code)
		}
	}
	// The key space itself cannot be put.
	if code := errorCode(t, mustServe(t, h, http.StatusMethodNotAllowed, "PUT", "/v1/kv", "v")); code != "method_not_allowed" {
		t.Errorf("PUT /v1/kv: code %q, want method_not_allowed", code)
	}
	rec := mustServe(t, h, http.StatusNotFound, "GET", "/v1/kv/missing", "")
	if code := errorCode(t, rec); code != "key_not_found" {
		t.Errorf("GET /v1/kv/missing: code %q, want key_not_found", code)
	}
}

// TestPathKeyPercentErrors sends malformed escapes over a real connection:
// they never reach a key.
func TestPathKeyPercentErrors(t *testing.T) {
	h, _ := newTestHandler(t, Config{})
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, path := range []string{"/v1/kv/%zz", "/v1/kv/a%", "/v1/kv/a%2", "/v1/kv/%g0"} {
		conn, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "PUT %s HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nConnection: close\r\n\r\nv", path)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("PUT %s: %v", path, err)
		}
		resp.Body.Close()
		conn.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("PUT %s = %d, want 400", path, resp.StatusCode)
		}
	}
	if got := listKeys(t, h, ""); len(got) != 0 {
		t.Errorf("after malformed PUTs, keys %q, want none", got)
	}
}

// FuzzPathKey checks that any key, escaped as a client would, comes back
// from pathKey as itself, and that pathKey never panics on any path.
func FuzzPathKey(f *testing.F) {
	for _, s := range []string{"a", "a/b//c", "a%2Fb", "%", "%zz", "\xff", "?#", "..", " ", "世界"} {
		f.Add([]byte(s), s)
	}
	f.Fuzz(func(t *testing.T, key []byte, rawPath string) {
		target := "/v1/kv/" + url.PathEscape(string(key))
		r := httptest.NewRequest("GET", target, nil)
		got, err := pathKey(r)
		switch {
		case len(key) == 0:
			if err == nil || err.code != "invalid_argument" {
				t.Fatalf("pathKey(%q) = %q, %v; want invalid_argument for the empty key", target, got, err)
			}
		case err != nil || !bytes.Equal(got, key):
			t.Fatalf("pathKey(%q) = %q, %v; want %q", target, got, err, key)
		}

		u, perr := url.Parse("/v1/kv/" + rawPath)
		if perr != nil || u.Path == "" || strings.Contains(rawPath, "?") || strings.Contains(rawPath, "#") {
			return
		}
		r = &http.Request{URL: u}
		got, err = pathKey(r)
		if err != nil {
			if err.code != "invalid_argument" {
				t.Fatalf("pathKey(%q) error %v, want invalid_argument", rawPath, err)
			}
			return
		}
		if want := strings.TrimPrefix(u.Path, "/v1/kv/"); string(got) != want {
			t.Fatalf("pathKey(%q) = %q, want the decoded path %q", rawPath, got, want)
		}
	})
}

// FuzzPathKeyRouter puts a key through the router by its escaped path and
// reads it back by key_base64: the key must be the one written.
func FuzzPathKeyRouter(f *testing.F) {
	h, _ := newTestHandler(f, Config{})
	for _, s := range []string{"a", "a/b//c", "a%2Fb", "\xff\x00", "..", "世界"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, key []byte) {
		if len(key) == 0 {
			return
		}
		target := "/v1/kv/" + url.PathEscape(string(key))
		mustServe(t, h, http.StatusOK, "PUT", target, "v")
		rec := mustServe(t, h, http.StatusOK, "GET", "/v1/kv?key_base64="+url.QueryEscape(base64.StdEncoding.EncodeToString(key)), "")
		var body wire.ListResponse
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatalf("GET by key_base64: body %q: %v", rec.Body, err)
		}
		if len(body.KVs) != 1 || wiretest.Key(body.KVs[0]) != string(key) {
			t.Fatalf("PUT %s then GET by key_base64 %q = %s", target, key, rec.Body)
		}
		mustServe(t, h, http.StatusOK, "DELETE", target, "")
	})
}
