package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
)

// newQueryOf reads raw as a route would that accepts every parameter
// of list, history and watch, b and n, and every name raw holds: these
// tests are about values (TestUnknownQueryParam is about names).
func newQueryOf(raw string) *query {
	accepted := paramsOf(listParams, historyParams, watchParams, params{"b", "n"})
	v, _ := url.ParseQuery(raw)
	for name := range v {
		accepted = append(accepted, name)
	}
	return newQuery(&http.Request{URL: &url.URL{RawQuery: raw}}, accepted)
}

func TestQueryBoolean(t *testing.T) {
	tests := []struct {
		raw     string
		want    bool
		wantErr bool
	}{
		{"", false, false},
		{"b=true", true, false},
		{"b=1", true, false},
		{"b=false", false, false},
		{"b=0", false, false},
		{"b=", false, false},
		{"b=TRUE", true, false},
		{"b=yes", false, true},
		{"b=2", false, true},
		{"b=tru", false, true},
		{"b=%20true", false, true},
		{"b=-1", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			q := newQueryOf(tt.raw)
			got := q.boolean("b")
			if got != tt.want || (q.err != nil) != tt.wantErr {
				t.Errorf("boolean(b) of %q = %v, err %v; want %v, error %v", tt.raw, got, q.err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestQueryInt64(t *testing.T) {
	tests := []struct {
		raw     string
		want    int64
		wantErr bool
	}{
		{"", 7, false},
		{"n=", 7, false},
		{"n=0", 0, false},
		{"n=42", 42, false},
		{"n=9223372036854775807", 1<<63 - 1, false},
		{"n=9223372036854775808", 7, true},
		{"n=-1", 7, true},
		{"n=1.5", 7, true},
		{"n=abc", 7, true},
		{"n=0x10", 7, true},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			q := newQueryOf(tt.raw)
			got := q.int64("n", 7)
			if got != tt.want || (q.err != nil) != tt.wantErr {
				t.Errorf("int64(n, 7) of %q = %d, err %v; want %d, error %v", tt.raw, got, q.err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestQuerySelector(t *testing.T) {
	all := keyrange.Range{Key: []byte{0}, End: []byte{0}}
	tests := []struct {
		raw        string
		requireKey bool
		want       keyrange.Range
		wantErr    bool
	}{
		{"", false, all, false},
		{"", true, keyrange.Range{}, true},
		{"key=a", false, keyrange.Range{Key: []byte("a")}, false},
		{"key=a&prefix=true", false, keyrange.Range{Key: []byte("a"), End: []byte("b")}, false},
		{"key=a&prefix=1", false, keyrange.Range{Key: []byte("a"), End: []byte("b")}, false},
		{"key=a&prefix=false", false, keyrange.Range{Key: []byte("a")}, false},
		{"key=a%FF&prefix=true", false, keyrange.Range{Key: []byte("a\xff"), End: []byte("b")}, false},
		{"key=%FF%FF&prefix=true", false, keyrange.Range{Key: []byte("\xff\xff"), End: []byte{0}}, false},
		{"key=&prefix=true", false, all, false},
		{"prefix=true", false, all, false},
		{"key=a&from_key=true", false, keyrange.Range{Key: []byte("a"), End: []byte{0}}, false},
		{"key=a&range_end=c", false, keyrange.Range{Key: []byte("a"), End: []byte("c")}, false},
		{"key_base64=YQ%3D%3D&range_end_base64=Yw==", false, keyrange.Range{Key: []byte("a"), End: []byte("c")}, false},
		{"key=a&range_end=", false, keyrange.Range{}, true},
		{"key=", false, keyrange.Range{}, true},
		{"key=a&prefix=true&from_key=true", false, keyrange.Range{}, true},
		{"key=a&prefix=true&range_end=c", false, keyrange.Range{}, true},
		{"key=a&from_key=1&range_end=c", false, keyrange.Range{}, true},
		{"range_end=c", false, keyrange.Range{}, true},
		{"from_key=true", false, keyrange.Range{}, true},
		{"key=a&key_base64=YQ==", false, keyrange.Range{}, true},
		{"key_base64=!!", false, keyrange.Range{}, true},
		{"key=a&prefix=yes", false, keyrange.Range{}, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/require=%v", tt.raw, tt.requireKey), func(t *testing.T) {
			q := newQueryOf(tt.raw)
			got := q.selector(tt.requireKey)
			if tt.wantErr {
				if q.err == nil || q.err.code != "invalid_argument" {
					t.Errorf("selector(%v) of %q = %q, err %v; want invalid_argument", tt.requireKey, tt.raw, got, q.err)
				}
				return
			}
			if q.err != nil || !bytes.Equal(got.Key, tt.want.Key) || !bytes.Equal(got.End, tt.want.End) ||
				(got.End == nil) != (tt.want.End == nil) {
				t.Errorf("selector(%v) of %q = %q, err %v; want %q", tt.requireKey, tt.raw, got, q.err, tt.want)
			}
		})
	}
}

func TestQueryRangeOptions(t *testing.T) {
	tests := []struct {
		raw     string
		want    kv.RangeOptions
		wantErr bool
	}{
		{"", kv.RangeOptions{}, false},
		{"revision=5&keys_only=1&count_only=true", kv.RangeOptions{Revision: 5, KeysOnly: true, CountOnly: true}, false},
		{"sort_target=mod&sort_order=descend", kv.RangeOptions{SortTarget: kv.SortByMod, SortOrder: kv.SortDescend}, false},
		{"sort_target=value&sort_order=ascend", kv.RangeOptions{SortTarget: kv.SortByValue, SortOrder: kv.SortAscend}, false},
		{"min_mod_revision=2&max_mod_revision=9&min_create_revision=3&max_create_revision=8",
			kv.RangeOptions{MinModRevision: 2, MaxModRevision: 9, MinCreateRevision: 3, MaxCreateRevision: 8}, false},
		{"sort_target=size", kv.RangeOptions{}, true},
		{"sort_order=up", kv.RangeOptions{}, true},
		{"revision=-1", kv.RangeOptions{}, true},
		{"keys_only=maybe", kv.RangeOptions{}, true},
		{"min_mod_revision=x", kv.RangeOptions{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			q := newQueryOf(tt.raw)
			got := q.rangeOptions()
			if (q.err != nil) != tt.wantErr || (!tt.wantErr && got != tt.want) {
				t.Errorf("rangeOptions() of %q = %+v, err %v; want %+v, error %v", tt.raw, got, q.err, tt.want, tt.wantErr)
			}
		})
	}
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
			sel := q.selector(requireKey)
			q.rangeOptions()
			if q.err != nil {
				if q.err.code != kv.CodeInvalidArgument {
					t.Fatalf("selector of %q: error %v, want invalid_argument", raw, q.err)
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
