package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/httpkv/httpkv/kv"

	"github.com/httpkv/httpkv/wire"
)

// newQueryOf reads raw as a route would that accepts every parameter
// of list, history and watch, b and n, and every name raw holds: these
// tests are about values (TestUnknownQueryParam is about names).
func newQueryOf(raw string) *wire.Query {
	accepted := wire.ParamsOf(listParams, historyParams, watchParams, wire.Params{"b", "n"})
	v, _ := url.ParseQuery(raw)
	for name := range v {
		accepted = append(accepted, name)
	}
	return newQuery(&http.Request{URL: &url.URL{RawQuery: raw}}, accepted)
}

// TestQueryThroughRouter checks booleans and bad parameters as clients
// send them, on each route that reads them.
func TestQueryThroughRouter(t *testing.T) {
	h, _ := newTestHandler(t, Config{})
	for _, k := range []string{"a", "a/1", "a/2", "b"} {
		mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/"+k, "v")
	}
	lists := []struct {
		query string
		want  []string
	}{
		{"key=a&prefix=true", []string{"a", "a/1", "a/2"}},
		{"key=a&prefix=1", []string{"a", "a/1", "a/2"}},
		{"key=a&prefix=false", []string{"a"}},
		{"key=a&prefix=0", []string{"a"}},
		{"key=a%2F&from_key=1", []string{"a/1", "a/2", "b"}},
		{"key=a%2F1&range_end=b", []string{"a/1", "a/2"}},
		{"", []string{"a", "a/1", "a/2", "b"}},
		{"limit=2", []string{"a", "a/1"}},
		{"sort_order=descend&limit=1", []string{"b"}},
	}
	for _, l := range lists {
		if got := listKeys(t, h, l.query); !slices.Equal(got, l.want) {
			t.Errorf("GET /v1/kv?%s keys = %q, want %q", l.query, got, l.want)
		}
	}

	bad := []struct{ method, target string }{
		{"GET", "/v1/kv?key=a&prefix=yes"},
		{"GET", "/v1/kv?key=a&prefix=true&from_key=true"},
		{"GET", "/v1/kv?range_end=b"},
		{"GET", "/v1/kv?limit=0"},
		{"GET", "/v1/kv?limit=10001"},
		{"GET", "/v1/kv?limit=-5"},
		{"GET", "/v1/kv?revision=abc"},
		{"GET", "/v1/kv?sort_target=size"},
		{"GET", "/v1/kv?page_token=garbage"},
		{"GET", "/v1/kv?keys_only=2"},
		{"GET", "/v1/kv/a?raw=yes"},
		{"GET", "/v1/kv/a?revision=-1"},
		{"PUT", "/v1/kv/a?prev_kv=t"},
		{"PUT", "/v1/kv/a?lease=x"},
		{"DELETE", "/v1/kv/a?prev_kv=on"},
		{"DELETE", "/v1/kv"},
		{"DELETE", "/v1/kv?key=a&prefix=nope"},
		{"GET", "/v1/watch?key=a&prefix=yes"},
		{"GET", "/v1/watch?key=a&start_revision=-2"},
		{"GET", "/v1/watch?key=a&filters=noput,bogus"},
		{"GET", "/v1/watch?key=a&progress_notify=sometimes"},
		// A malformed query string is refused whole, not read without the
		// pair that does not parse.
		{"GET", "/v1/kv?key=%ZZ"},
		{"GET", "/v1/kv?page_token=%%%"},
		{"GET", "/v1/kv?key=a;b"},
		{"GET", "/v1/kv/a?revision=%ZZ"},
		{"PUT", "/v1/kv/a?lease=%ZZ"},
		{"PUT", "/v1/kv/a?%"},
		{"DELETE", "/v1/kv/a?prev_kv=true&x=%ZZ"},
		{"DELETE", "/v1/kv?key=a&prefix=true&%ZZ"},
		{"GET", "/v1/watch?key=%ZZ"},
		{"POST", "/v1/txn?x=%ZZ"},
	}
	for _, b := range bad {
		rec := serve(t, h, b.method, b.target, "")
		if rec.Code != http.StatusBadRequest {
			t.Errorf("%s %s = %d %s, want 400", b.method, b.target, rec.Code, rec.Body)
			continue
		}
		if code := errorCode(t, rec); code != "invalid_argument" {
			t.Errorf("%s %s: code %q, want invalid_argument", b.method, b.target, code)
		}
	}
	// Nothing was deleted by the refused deletes, nor put by the refused
	// puts.
	if got := listKeys(t, h, ""); len(got) != 4 {
		t.Errorf("after refused deletes, keys %q, want all 4", got)
	}
	if rec := mustServe(t, h, http.StatusOK, "GET", "/v1/kv/a?raw=true", ""); rec.Body.String() != "v" || rec.Header().Get("X-Version") != "1" {
		t.Errorf("after refused puts, a = %q at version %s, want \"v\" at version 1", rec.Body, rec.Header().Get("X-Version"))
	}
	rec := mustServe(t, h, http.StatusOK, "GET", "/v1/kv/a?raw=1", "")
	if ct := rec.Header().Get("Content-Type"); ct != "application/octet-stream" {
		t.Errorf("GET /v1/kv/a?raw=1: Content-Type %q, want application/octet-stream", ct)
	}
	rec = mustServe(t, h, http.StatusOK, "GET", "/v1/kv/a?raw=0", "")
	if ct := rec.Header().Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("GET /v1/kv/a?raw=0: Content-Type %q, want JSON", ct)
	}
}

// FuzzQuery parses arbitrary query strings as list, delete and watch read
// them, then sends them to those routes and to history: no panic, and
// either a 400 invalid_argument or a well-formed selection.
func FuzzQuery(f *testing.F) {
	h, _ := newTestHandler(f, Config{})
	mustServe(f, h, http.StatusOK, "PUT", "/v1/kv/a", "v")
	for _, s := range []string{
		"", "key=a", "key=a&prefix=true", "key=a&range_end=b", "key=a&from_key=1", "prefix=1",
		"key_base64=YQ==&range_end_base64=Yg==", "key=&prefix=true", "limit=1&sort_order=descend&sort_target=mod",
		"revision=1&keys_only=true&count_only=0", "key=%ff&prefix=true", "key=a&key=b", "key=a;b", "%zz",
		"min_mod_revision=1&max_create_revision=3", "page_token=AQIAAAAAAAAAAA",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		for _, requireKey := range []bool{false, true} {
			q := newQueryOf(raw)
			sel := q.Selector(requireKey)
			q.RangeOptions()
			if q.Err() != nil {
				if code, _, _ := kv.CodeOf(q.Err()); code != kv.CodeInvalidArgument {
					t.Fatalf("selector of %q: error %v, want invalid_argument", raw, q.Err())
				}
				continue
			}
			if len(sel.Key) == 0 {
				t.Fatalf("selector(%v) of %q = %q: empty key without an error", requireKey, raw, sel)
			}
			if sel.End != nil && len(sel.End) == 0 {
				t.Fatalf("selector(%v) of %q = %q: empty, non-nil end", requireKey, raw, sel)
			}
		}
		u := &url.URL{Path: "/v1/kv", RawQuery: raw}
		for _, target := range []struct{ method, path string }{{"GET", "/v1/kv"}, {"GET", "/v1/watch"}, {"GET", "/v1/history"}} {
			u.Path = target.path
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // a watch answers its first lines and returns
			req := httptest.NewRequestWithContext(ctx, target.method, "/", nil)
			req.URL = u
			req.RequestURI = u.RequestURI()
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			switch rec.Code {
			case http.StatusOK, http.StatusGone:
			case http.StatusBadRequest:
				if c := errorCode(t, rec); c != "invalid_argument" && c != "future_revision" {
					t.Fatalf("%s %s: 400 with code %q", target.method, u, c)
				}
			default:
				t.Fatalf("%s %s = %d %s", target.method, u, rec.Code, rec.Body)
			}
		}
	})
}

// FuzzMalformedQuery checks that malformedQuery refuses exactly what
// url.ParseQuery refuses.
func FuzzMalformedQuery(f *testing.F) {
	for _, s := range []string{"", "a=b", "a=%zz", "a=%4", "a=%41", "%", "a;b", "a=b;c", "%GG=1", "k=%e2%82%ac", "&&=", "a=b&%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		_, err := url.ParseQuery(raw)
		if got := malformedQuery(raw); (got != "") != (err != nil) {
			t.Fatalf("malformedQuery(%q) = %q, url.ParseQuery error %v", raw, got, err)
		}
	})
}

// TestRepeatedQueryParam: a parameter given twice is refused, not read as
// its first value: DELETE /v1/kv?key=zz&key=a deleted zz and left a,
// which its sender may have meant.
func TestRepeatedQueryParam(t *testing.T) {
	h, _ := newTestHandler(t, Config{})
	for _, k := range []string{"a", "zz"} {
		mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/"+k, "v")
	}
	bad := []struct{ method, target string }{
		{"DELETE", "/v1/kv?key=zz&key=a"},
		{"DELETE", "/v1/kv?key=zz&prefix=true&prefix=false"},
		{"DELETE", "/v1/kv/a?prev_kv=true&prev_kv=false"},
		{"GET", "/v1/kv?key=a&key=zz"},
		{"GET", "/v1/kv?limit=1&limit=2"},
		{"GET", "/v1/kv/a?revision=1&revision=2"},
		{"PUT", "/v1/kv/a?lease=0&lease=0"},
		{"GET", "/v1/watch?key=a&key=b"},
		{"GET", "/v1/history?key=a&key=b"},
		{"GET", "/v1/leases/1?keys=true&keys=false"},
	}
	for _, b := range bad {
		// A watch that is not refused streams until its context ends.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequestWithContext(ctx, b.method, b.target, nil))
		cancel()
		if rec.Code != http.StatusBadRequest {
			t.Errorf("%s %s = %d %s, want 400", b.method, b.target, rec.Code, rec.Body)
			continue
		}
		if code := errorCode(t, rec); code != "invalid_argument" {
			t.Errorf("%s %s: code %q, want invalid_argument", b.method, b.target, code)
		}
		if !strings.Contains(rec.Body.String(), "more than once") {
			t.Errorf("%s %s: message %s does not say the parameter is repeated", b.method, b.target, rec.Body)
		}
	}
	if got := listKeys(t, h, ""); !slices.Equal(got, []string{"a", "zz"}) {
		t.Errorf("after refused requests, keys %q, want [a zz]", got)
	}
	if rec := mustServe(t, h, http.StatusOK, "GET", "/v1/kv/a?raw=true", ""); rec.Header().Get("X-Version") != "1" {
		t.Errorf("after a refused put, a is at version %s, want 1", rec.Header().Get("X-Version"))
	}
}
