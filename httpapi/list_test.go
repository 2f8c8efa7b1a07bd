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
)

func TestPageTokenRoundTrip(t *testing.T) {
	tests := []pageToken{
		{rev: 1, start: []byte{}, bind: 0},
		{rev: 2, start: []byte("a\x00"), bind: 1<<64 - 1},
		{rev: 1 << 62, start: []byte{0xff, 0, 0xff}, bind: 12345},
		{rev: 300, start: bytes.Repeat([]byte("k"), 1000), bind: rangeBinding(KeyRange{Key: []byte("a"), End: []byte("b")})},
	}
	for _, tok := range tests {
		s := tok.encode()
		got, ok := decodePageToken(s)
		if !ok || got.rev != tok.rev || got.bind != tok.bind || !bytes.Equal(got.start, tok.start) {
			t.Errorf("decodePageToken(encode(%+v)) = %+v, %v; want the token back", tok, got, ok)
		}
		if url.QueryEscape(s) != s {
			t.Errorf("encode(%+v) = %q, which needs escaping in a query", tok, s)
		}
	}
}

func TestPageTokenGarbage(t *testing.T) {
	valid := pageToken{rev: 5, start: []byte("k"), bind: 7}.encode()
	raw, _ := base64.RawURLEncoding.DecodeString(valid)
	for name, s := range map[string]string{
		"empty":           "",
		"not base64":      "!!!",
		"padded":          valid + "=",
		"std alphabet":    "+/+/",
		"version 2":       base64.RawURLEncoding.EncodeToString(append([]byte{2}, raw[1:]...)),
		"no revision":     base64.RawURLEncoding.EncodeToString([]byte{1}),
		"revision 0":      base64.RawURLEncoding.EncodeToString(append([]byte{1, 0}, make([]byte, 8)...)),
		"short binding":   base64.RawURLEncoding.EncodeToString([]byte{1, 5, 0, 0, 0}),
		"varint overflow": base64.RawURLEncoding.EncodeToString(append([]byte{1}, bytes.Repeat([]byte{0xff}, 11)...)),
		"revision 2^62+1": pageToken{rev: 1<<62 + 1, bind: 1}.encode(),
	} {
		if tok, ok := decodePageToken(s); ok {
			t.Errorf("decodePageToken(%s %q) = %+v, want refused", name, s, tok)
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
		var body listBody
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatalf("GET /v1/kv?%s: body %q: %v", q, rec.Body, err)
		}
		if body.Count != 7 {
			t.Errorf("page %d: count %d, want 7 (the whole range)", page, body.Count)
		}
		for _, kv := range body.KVs {
			got = append(got, kv.key())
			if kv.ModRevision > firstRev && firstRev != 0 {
				t.Errorf("page %d: %q at mod revision %d, after the first page's revision %d", page, kv.key(), kv.ModRevision, firstRev)
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
	var body listBody
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

// FuzzPageToken checks that tokens round-trip and that any string given
// as a token is refused or decodes to a token in bounds, which the list
// route answers without a 500.
func FuzzPageToken(f *testing.F) {
	h, _ := newTestHandler(f, Config{})
	for _, k := range []string{"a", "b", "c"} {
		mustServe(f, h, http.StatusOK, "PUT", "/v1/kv/"+k, "v")
	}
	f.Add(int64(1), uint64(0), []byte("a"), pageToken{rev: 2, start: []byte("b"), bind: rangeBinding(KeyRange{Key: []byte{0}, End: []byte{0}})}.encode())
	f.Add(int64(1<<62), uint64(1<<64-1), []byte{}, "")
	f.Add(int64(0), uint64(7), []byte{0xff}, "AQ")
	f.Add(int64(-5), uint64(7), []byte("k"), "AQUAAAAAAAAAAGs")
	f.Add(int64(99), uint64(3), []byte("zz"), "!!")
	f.Fuzz(func(t *testing.T, rev int64, bind uint64, start []byte, garbage string) {
		if rev >= 1 && rev <= 1<<62 {
			tok := pageToken{rev: rev, start: start, bind: bind}
			got, ok := decodePageToken(tok.encode())
			if !ok || got.rev != rev || got.bind != bind || !bytes.Equal(got.start, start) {
				t.Fatalf("decodePageToken(encode(%+v)) = %+v, %v", tok, got, ok)
			}
		}
		tok, ok := decodePageToken(garbage)
		if ok {
			if tok.rev < 1 || tok.rev > 1<<62 || tok.start == nil {
				t.Fatalf("decodePageToken(%q) = %+v: out of bounds", garbage, tok)
			}
			again, ok := decodePageToken(tok.encode())
			if !ok || again.rev != tok.rev || again.bind != tok.bind || !bytes.Equal(again.start, tok.start) {
				t.Fatalf("decodePageToken(%q) = %+v does not round-trip: %+v, %v", garbage, tok, again, ok)
			}
		}
		rec := serve(t, h, "GET", "/v1/kv?limit=1&page_token="+url.QueryEscape(garbage), "")
		switch rec.Code {
		case http.StatusOK, http.StatusGone:
		case http.StatusBadRequest:
			if c := errorCode(t, rec); c != "invalid_argument" && c != "future_revision" {
				t.Fatalf("GET with page_token %q: 400 with code %q", garbage, c)
			}
		default:
			t.Fatalf("GET with page_token %q = %d %s", garbage, rec.Code, rec.Body)
		}
	})
}
