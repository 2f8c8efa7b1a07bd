package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/httpkv/httpkv/internal/wiretest"
	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"

	"github.com/httpkv/httpkv/wire"
)

// TestPagination follows next_page_token through a range while writes
// and a compaction go on: pages are read at the first page's revision,
// and a token below the compact revision answers 410.
func TestPagination(t *testing.T) {
	h, _ := newTestHandler(t, Config{})
	var want []string
	for i := range 7 {
		k := fmt.Sprintf("p/%02d", i)
		want = append(want, k)
		mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/"+k, "v")
	}
	mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/q", "outside")

	var got []string
	var firstRev int64
	q := "key=p%2F&prefix=true&limit=3"
	for page := 0; ; page++ {
		rec := mustServe(t, h, http.StatusOK, "GET", "/v1/kv?"+q, "")
		var body wire.ListResponse
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatalf("GET /v1/kv?%s: body %q: %v", q, rec.Body, err)
		}
		if body.Count != 7 {
			t.Errorf("page %d: count %d, want 7 (the whole range)", page, body.Count)
		}
		for _, kval := range body.KVs {
			got = append(got, wiretest.Key(kval))
			if kval.ModRevision > firstRev && firstRev != 0 {
				t.Errorf("page %d: %q at mod revision %d, after the first page's revision %d", page, wiretest.Key(kval), kval.ModRevision, firstRev)
			}
		}
		if page == 0 {
			firstRev = body.Header.Revision
			// Writes after the first page must not show in later pages.
			mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/p%2F00a", "new")
			mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/p%2F05", "changed")
		}
		if !body.More {
			if body.NextPageToken != "" {
				t.Errorf("last page has next_page_token %q", body.NextPageToken)
			}
			break
		}
		if body.NextPageToken == "" {
			t.Fatalf("page %d: more without next_page_token: %s", page, rec.Body)
		}
		q = "key=p%2F&prefix=true&limit=3&page_token=" + url.QueryEscape(body.NextPageToken)
	}
	if !slices.Equal(got, want) {
		t.Errorf("pages gave %q, want %q", got, want)
	}

	// A token of one range does not serve another.
	rec := mustServe(t, h, http.StatusOK, "GET", "/v1/kv?key=p%2F&prefix=true&limit=2", "")
	var body wire.ListResponse
	_ = json.Unmarshal(rec.Body.Bytes(), &body)
	tok := url.QueryEscape(body.NextPageToken)
	for _, other := range []string{"key=q&prefix=true", "key=p%2F&from_key=true", "", "key=p%2F&prefix=true&sort_order=descend",
		"key=p%2F&prefix=true&revision=1"} {
		rec := serve(t, h, "GET", "/v1/kv?"+other+"&page_token="+tok, "")
		if rec.Code != http.StatusBadRequest || errorCode(t, rec) != "invalid_argument" {
			t.Errorf("GET /v1/kv?%s with another range's token = %d %s, want 400 invalid_argument", other, rec.Code, rec.Body)
		}
	}
	mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/z", "v")
	mustServe(t, h, http.StatusOK, "POST", "/v1/compact", fmt.Sprintf(`{"revision":%d}`, body.Header.Revision+1))
	rec = serve(t, h, "GET", "/v1/kv?key=p%2F&prefix=true&limit=2&page_token="+tok, "")
	if rec.Code != http.StatusGone || errorCode(t, rec) != "compacted" {
		t.Errorf("GET /v1/kv with a token below the compact revision = %d %s, want 410 compacted", rec.Code, rec.Body)
	}
}

// FuzzPageToken checks that list tokens round-trip, and that any string
// given as a token is refused (the server seals its tokens, so a made-up
// one never opens) without a 500.
func FuzzPageToken(f *testing.F) {
	h, _ := newTestHandler(f, Config{})
	for _, k := range []string{"a", "b", "c"} {
		mustServe(f, h, http.StatusOK, "PUT", "/v1/kv/"+k, "v")
	}
	// A well-formed token of another server (another key).
	other := wire.NewTokens([]byte("another server's key"))
	f.Add(int64(1), []byte("a"), other.Seal(wire.TokenListPage, wire.ListPage{Rev: 2, Start: []byte("b"),
		Binding: wire.ListBinding(keyrange.Range{Key: []byte{0}, End: []byte{0}}, kv.RangeOptions{})}.Payload()))
	f.Add(int64(1<<62), []byte{}, "")
	f.Add(int64(0), []byte{0xff}, "AQ")
	f.Add(int64(-5), []byte("k"), "AQUAAAAAAAAAAGs")
	f.Add(int64(99), []byte("zz"), "!!")
	f.Fuzz(func(t *testing.T, rev int64, start []byte, garbage string) {
		if rev >= 1 && rev <= 1<<62 {
			p := wire.ListPage{Rev: rev, Start: start, Binding: wire.ListBinding(keyrange.Range{Key: start, End: []byte{0}}, kv.RangeOptions{})}
			b, err := h.tokens.Open(wire.TokenListPage, h.tokens.Seal(wire.TokenListPage, p.Payload()))
			got, ok := wire.ParseListPage(b)
			if err != nil || !ok || got.Rev != rev || got.Binding != p.Binding || !bytes.Equal(got.Start, start) {
				t.Fatalf("open(seal(%+v)) = %+v, %v, %v", p, got, ok, err)
			}
		}
		if b, err := h.tokens.Open(wire.TokenListPage, garbage); err == nil {
			t.Fatalf("open(%q) = %q: a token the handler did not seal was accepted", garbage, b)
		}
		rec := serve(t, h, "GET", "/v1/kv?limit=1&page_token="+url.QueryEscape(garbage), "")
		switch {
		case garbage == "" && rec.Code == http.StatusOK:
		case rec.Code == http.StatusBadRequest && errorCode(t, rec) == "invalid_argument":
		default:
			t.Fatalf("GET with page_token %q = %d %s, want 400 invalid_argument", garbage, rec.Code, rec.Body)
		}
	})
}
