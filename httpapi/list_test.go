package httpapi

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
)

// TestTokenCodec seals and opens tokens: a token opens, for its kind and
// under its key only, to the payload it was sealed with, and any change
// to it, its kind, or the key refuses it.
func TestTokenCodec(t *testing.T) {
	c := newTokenCodec([]byte("a key shared by gateways"))
	payloads := [][]byte{{}, []byte("p"), bytes.Repeat([]byte{0xff, 0}, 500)}
	for _, p := range payloads {
		tok := c.seal(tokenKindListPage, p)
		got, err := c.open(tokenKindListPage, tok)
		if err != nil || !bytes.Equal(got, p) {
			t.Errorf("open(seal(%q)) = %q, %v; want the payload back", p, got, err)
		}
		if url.QueryEscape(tok) != tok {
			t.Errorf("seal(%q) = %q, which needs escaping in a query", p, tok)
		}
		if _, err := c.open(tokenKindListPage+1, tok); err == nil {
			t.Errorf("open(another kind, seal(%q)) = nil error, want refused", p)
		}
		if _, err := newTokenCodec([]byte("another key")).open(tokenKindListPage, tok); err == nil {
			t.Errorf("open under another key of seal(%q) = nil error, want refused", p)
		}
		if _, err := newTokenCodec([]byte("a key shared by gateways")).open(tokenKindListPage, tok); err != nil {
			t.Errorf("open under the same key in another codec of seal(%q) = %v, want it opened", p, err)
		}
		raw, _ := base64.RawURLEncoding.DecodeString(tok)
		for i := range raw {
			bad := bytes.Clone(raw)
			bad[i] ^= 0x01
			if got, err := c.open(tokenKindListPage, base64.RawURLEncoding.EncodeToString(bad)); err == nil {
				t.Fatalf("open(seal(%q) with byte %d flipped) = %q, want refused", p, i, got)
			}
		}
		for _, cut := range []int{1, 2, len(raw) - 1} {
			if _, err := c.open(tokenKindListPage, base64.RawURLEncoding.EncodeToString(raw[:cut])); err == nil {
				t.Errorf("open(seal(%q) cut to %d bytes) = nil error, want refused", p, cut)
			}
		}
	}
	for name, s := range map[string]string{
		"empty": "", "not base64": "!!!", "padded": c.seal(tokenKindListPage, nil) + "=", "std alphabet": "+/+/",
		// The unkeyed format of earlier versions: version 1, revision 5,
		// an FNV binding, start key "k".
		"format 1": "AQUAAAAAAAAAB2s",
	} {
		if got, err := c.open(tokenKindListPage, s); err == nil {
			t.Errorf("open(%s %q) = %q, want refused", name, s, got)
		}
	}
	if a, b := newTokenCodec(nil), newTokenCodec(nil); bytes.Equal(a.key, b.key) || len(a.key) != tokenKeyBytes {
		t.Errorf("two codecs without a key got keys %x and %x, want two random %d-byte keys", a.key, b.key, tokenKeyBytes)
	}
}

// TestListPagePayload round-trips the payload of a list token and refuses
// malformed ones.
func TestListPagePayload(t *testing.T) {
	for _, p := range []listPage{
		{rev: 1, start: []byte{}},
		{rev: 1 << 62, start: []byte("a\x00"), binding: listBinding(keyrange.Range{Key: []byte("a"), End: []byte("b")}, kv.RangeOptions{})},
	} {
		got, ok := parseListPage(p.payload())
		if !ok || got.rev != p.rev || got.binding != p.binding || !bytes.Equal(got.start, p.start) {
			t.Errorf("parseListPage(payload(%+v)) = %+v, %v", p, got, ok)
		}
	}
	for name, b := range map[string][]byte{
		"empty": nil, "revision 0": append([]byte{0}, make([]byte, listBindingSize)...),
		"short binding": {5, 0, 0}, "varint overflow": bytes.Repeat([]byte{0xff}, 11),
		"revision 2^62+1": listPage{rev: 1<<62 + 1}.payload(),
	} {
		if p, ok := parseListPage(b); ok {
			t.Errorf("parseListPage(%s) = %+v, want refused", name, p)
		}
	}
	a := keyrange.Range{Key: []byte("a"), End: []byte("b")}
	for name, other := range map[string]struct {
		sel keyrange.Range
		o   kv.RangeOptions
	}{
		"another end":         {keyrange.Range{Key: []byte("a"), End: []byte("c")}, kv.RangeOptions{}},
		"another key":         {keyrange.Range{Key: []byte("a\x00"), End: []byte("b")}, kv.RangeOptions{}},
		"key and end shifted": {keyrange.Range{Key: []byte("ab"), End: []byte{}}, kv.RangeOptions{}},
		"a filter":            {a, kv.RangeOptions{MinModRevision: 3}},
		"another filter":      {a, kv.RangeOptions{MaxCreateRevision: 3}},
	} {
		if listBinding(a, kv.RangeOptions{}) == listBinding(other.sel, other.o) {
			t.Errorf("listBinding(%s) = listBinding([a, b)), want them apart", name)
		}
	}
}

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
		var body listResponseDoc
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatalf("GET /v1/kv?%s: body %q: %v", q, rec.Body, err)
		}
		if body.Count != 7 {
			t.Errorf("page %d: count %d, want 7 (the whole range)", page, body.Count)
		}
		for _, kval := range body.KVs {
			got = append(got, kval.key())
			if kval.ModRevision > firstRev && firstRev != 0 {
				t.Errorf("page %d: %q at mod revision %d, after the first page's revision %d", page, kval.key(), kval.ModRevision, firstRev)
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
	var body listResponseDoc
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
	other := newTokenCodec([]byte("another server's key"))
	f.Add(int64(1), []byte("a"), other.seal(tokenKindListPage, listPage{rev: 2, start: []byte("b"),
		binding: listBinding(keyrange.Range{Key: []byte{0}, End: []byte{0}}, kv.RangeOptions{})}.payload()))
	f.Add(int64(1<<62), []byte{}, "")
	f.Add(int64(0), []byte{0xff}, "AQ")
	f.Add(int64(-5), []byte("k"), "AQUAAAAAAAAAAGs")
	f.Add(int64(99), []byte("zz"), "!!")
	f.Fuzz(func(t *testing.T, rev int64, start []byte, garbage string) {
		if rev >= 1 && rev <= 1<<62 {
			p := listPage{rev: rev, start: start, binding: listBinding(keyrange.Range{Key: start, End: []byte{0}}, kv.RangeOptions{})}
			b, err := h.tokens.open(tokenKindListPage, h.tokens.seal(tokenKindListPage, p.payload()))
			got, ok := parseListPage(b)
			if err != nil || !ok || got.rev != rev || got.binding != p.binding || !bytes.Equal(got.start, start) {
				t.Fatalf("open(seal(%+v)) = %+v, %v, %v", p, got, ok, err)
			}
		}
		if b, err := h.tokens.open(tokenKindListPage, garbage); err == nil {
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
