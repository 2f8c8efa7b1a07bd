package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/httpkv/httpkv/backend/embedded"
	"github.com/httpkv/httpkv/internal/storetest"
	"github.com/httpkv/httpkv/internal/wiretest"
	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"

	"github.com/httpkv/httpkv/wire"
)

// historyEvents shows the events in short: "put a=1@2", "delete a@5", with
// " (was a=2@4)" for a previous version.
func historyEvents(b wire.HistoryResponse) []string {
	out := make([]string, 0, len(b.Events))
	for _, ev := range b.Events {
		s := fmt.Sprintf("%s %s@%d", ev.Type, wiretest.Key(ev.KV), ev.KV.ModRevision)
		if ev.Type == "put" {
			s = fmt.Sprintf("put %s=%s@%d", wiretest.Key(ev.KV), wiretest.Value(ev.KV), ev.KV.ModRevision)
		}
		if ev.PrevKV != nil {
			s += fmt.Sprintf(" (was %s=%s@%d)", wiretest.Key(*ev.PrevKV), wiretest.Value(*ev.PrevKV), ev.PrevKV.ModRevision)
		}
		out = append(out, s)
	}
	return out
}

// getHistory reads GET /v1/history?query and fails unless it answers 200
// with every field of the contract and X-Revision as its header revision.
func getHistory(tb testing.TB, h http.Handler, query string) wire.HistoryResponse {
	tb.Helper()
	rec := mustServe(tb, h, http.StatusOK, "GET", "/v1/history?"+query, "")
	b := decodeDeclared[wire.HistoryResponse](tb, "GET /v1/history?"+query, rec.Body.Bytes())
	if b.Events == nil || b.Header.Revision == 0 {
		tb.Fatalf("GET /v1/history?%s = %s: want header, compact_revision, events and more", query, rec.Body)
	}
	if got := rec.Header().Get("X-Revision"); got != fmt.Sprint(b.Header.Revision) {
		tb.Fatalf("GET /v1/history?%s: X-Revision %q, want %d", query, got, b.Header.Revision)
	}
	if b.More != (b.NextPageToken != "") {
		tb.Fatalf("GET /v1/history?%s = %s: more and next_page_token disagree", query, rec.Body)
	}
	return b
}

// historyHandler serves this history:
//
//	2 put a=1   3 put b=1   4 put a=2   5 delete a   6 put a/x=\xff
//	7 put a=3
func historyHandler(t *testing.T, pageTokenKey []byte) http.Handler {
	t.Helper()
	b := storetest.Open(t, embedded.Options{PageTokenKey: pageTokenKey})
	h := NewHandler(b, nil, zerolog.Nop(), Config{})
	mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/a", "1")
	mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/b", "1")
	mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/a", "2")
	mustServe(t, h, http.StatusOK, "DELETE", "/v1/kv/a", "")
	mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/a%2Fx", "\xff")
	mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/a", "3")
	return h
}

// TestHistoryQuery reads the history with each parameter.
func TestHistoryQuery(t *testing.T) {
	h := historyHandler(t, nil)
	tests := []struct {
		query string
		want  []string
	}{
		{"", []string{"put a=1@2", "put b=1@3", "put a=2@4", "delete a@5", "put a/x=\xff@6", "put a=3@7"}},
		{"key=a", []string{"put a=1@2", "put a=2@4", "delete a@5", "put a=3@7"}},
		{"key_base64=YQ%3D%3D&order=descend", []string{"put a=3@7", "delete a@5", "put a=2@4", "put a=1@2"}},
		{"key=a&prefix=true&start_revision=5&end_revision=6", []string{"delete a@5", "put a/x=\xff@6"}},
		{"key=a%2F&range_end=b", []string{"put a/x=\xff@6"}},
		{"key=b&from_key=true", []string{"put b=1@3"}},
		{"key=a&prev_kv=true", []string{"put a=1@2", "put a=2@4 (was a=1@2)", "delete a@5 (was a=2@4)", "put a=3@7"}},
		{"filters=noput", []string{"delete a@5"}},
		{"filters=nodelete&key=a&order=ascend", []string{"put a=1@2", "put a=2@4", "put a=3@7"}},
		{"filters=noput,nodelete", []string{}},
		{"start_revision=7&end_revision=7", []string{"put a=3@7"}},
	}
	for _, tt := range tests {
		b := getHistory(t, h, tt.query)
		if got := historyEvents(b); !slices.Equal(got, tt.want) || b.More || b.Header.Revision != 7 || b.CompactRevision != 0 {
			t.Errorf("GET /v1/history?%s = %q more=%v revision %d compact %d; want %q, no more, revision 7, compact 0",
				tt.query, got, b.More, b.Header.Revision, b.CompactRevision, tt.want)
		}
	}
	// A delete's kv has the key and the delete's revision, no value.
	rec := mustServe(t, h, http.StatusOK, "GET", "/v1/history?filters=noput", "")
	if want := `"events":[{"type":"delete","kv":{"key":"a","create_revision":0,"mod_revision":5,"version":0,"lease":0}}]`; !strings.Contains(rec.Body.String(), want) {
		t.Errorf("GET /v1/history?filters=noput = %s, want %s", rec.Body, want)
	}
}

// followHistory reads query page by page, following next_page_token,
// and returns every event and the pages' count; after the first page it
// calls between.
func followHistory(tb testing.TB, h http.Handler, query string, between func()) ([]string, int) {
	tb.Helper()
	var all []string
	q := query
	for pages := 1; ; pages++ {
		b := getHistory(tb, h, q)
		all = append(all, historyEvents(b)...)
		if !b.More {
			return all, pages
		}
		if pages > 1000 {
			tb.Fatalf("GET /v1/history?%s: more than 1000 pages", query)
		}
		if between != nil && pages == 1 {
			between()
		}
		q = query + "&page_token=" + url.QueryEscape(b.NextPageToken)
	}
}

// TestHistoryPaging: pages of every size, both orders, add up to the one
// big page, and stay in the first page's window while writes go on.
func TestHistoryPaging(t *testing.T) {
	h := historyHandler(t, nil)
	for _, order := range []string{"ascend", "descend"} {
		for _, sel := range []string{"", "key=a", "key=a&prefix=true"} {
			base := sel + "&order=" + order + "&prev_kv=true"
			for _, limit := range []int{1, 2, 3, 1000} {
				whole := historyEvents(getHistory(t, h, base))
				got, pages := followHistory(t, h, fmt.Sprintf("%s&limit=%d", base, limit), func() {
					mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/a", "later")
				})
				if !slices.Equal(got, whole) || pages != max(1, (len(whole)+limit-1)/limit) {
					t.Errorf("GET /v1/history?%s&limit=%d over %d pages = %q, want %q in %d", base, limit, pages, got, whole, (len(whole)+limit-1)/limit)
				}
			}
		}
	}
}

// TestHistoryPageTokens: a token is good only for the range, order,
// filters and window it was issued for, and only as issued.
func TestHistoryPageTokens(t *testing.T) {
	h := historyHandler(t, nil)
	first := getHistory(t, h, "key=a&prefix=true&limit=1&filters=nodelete")
	tok := url.QueryEscape(first.NextPageToken)
	mustServe(t, h, http.StatusOK, "GET", "/v1/history?key=a&prefix=true&limit=2&filters=nodelete&prev_kv=true&page_token="+tok, "")
	mustServe(t, h, http.StatusOK, "GET", "/v1/history?key=a&prefix=true&filters=nodelete&start_revision=1&end_revision=7&page_token="+tok, "")

	raw := first.NextPageToken
	flip := []byte(raw)
	flip[len(flip)/2] ^= 1
	other := wire.NewTokens(nil).SealHistory(wire.HistoryToken{Start: 1, End: 7, Next: kv.Revision{Main: 2}}, keyrange.Range{Key: []byte("a"), End: []byte("b")})
	for _, q := range []string{
		"key=b&prefix=true&filters=nodelete&page_token=" + tok,
		"key=a&filters=nodelete&page_token=" + tok,
		"filters=nodelete&page_token=" + tok,
		"key=a&from_key=true&filters=nodelete&page_token=" + tok,
		"key=a&prefix=true&page_token=" + tok,
		"key=a&prefix=true&filters=nodelete,noput&page_token=" + tok,
		"key=a&prefix=true&filters=nodelete&order=descend&page_token=" + tok,
		"key=a&prefix=true&filters=nodelete&start_revision=3&page_token=" + tok,
		"key=a&prefix=true&filters=nodelete&end_revision=6&page_token=" + tok,
		"key=a&prefix=true&filters=nodelete&page_token=" + url.QueryEscape(string(flip)),
		"key=a&prefix=true&filters=nodelete&page_token=" + url.QueryEscape(raw[:len(raw)-2]),
		"key=a&prefix=true&page_token=" + url.QueryEscape(other),
		"key=a&prefix=true&page_token=%21%21",
	} {
		rec := serve(t, h, "GET", "/v1/history?"+q, "")
		if rec.Code != http.StatusBadRequest || errorCode(t, rec) != "invalid_argument" {
			t.Errorf("GET /v1/history?%s = %d %s, want 400 invalid_argument", q, rec.Code, rec.Body)
		}
	}
	// A list's token is no history token, nor the other way round.
	list := mustServe(t, h, http.StatusOK, "GET", "/v1/kv?limit=1", "")
	var l wire.ListResponse
	if err := json.Unmarshal(list.Body.Bytes(), &l); err != nil || l.NextPageToken == "" {
		t.Fatalf("GET /v1/kv?limit=1 = %s, want a next_page_token", list.Body)
	}
	if rec := serve(t, h, "GET", "/v1/history?page_token="+url.QueryEscape(l.NextPageToken), ""); rec.Code != http.StatusBadRequest {
		t.Errorf("GET /v1/history with a list's token = %d %s, want 400", rec.Code, rec.Body)
	}
	every := getHistory(t, h, "limit=1")
	if rec := serve(t, h, "GET", "/v1/kv?page_token="+url.QueryEscape(every.NextPageToken), ""); rec.Code != http.StatusBadRequest {
		t.Errorf("GET /v1/kv with a history token = %d %s, want 400", rec.Code, rec.Body)
	}
	// Tokens are signed with the configured key: another handler with the
	// same key takes them, one with a random key does not.
	key := []byte("a key shared by every gateway...")
	a, b := historyHandler(t, key), historyHandler(t, key)
	shared := getHistory(t, a, "limit=2").NextPageToken
	mustServe(t, b, http.StatusOK, "GET", "/v1/history?page_token="+url.QueryEscape(shared), "")
	if rec := serve(t, h, "GET", "/v1/history?page_token="+url.QueryEscape(shared), ""); rec.Code != http.StatusBadRequest {
		t.Errorf("GET /v1/history with another key's token = %d %s, want 400", rec.Code, rec.Body)
	}
}

// TestHistoryErrors: bad parameters, windows in the future or reversed,
// and history below the compact revision.
func TestHistoryErrors(t *testing.T) {
	h := historyHandler(t, nil)
	tests := []struct {
		query  string
		status int
		code   string
	}{
		{"key=", 400, "invalid_argument"},
		{"range_end=b", 400, "invalid_argument"},
		{"key=a&prefix=yes", 400, "invalid_argument"},
		{"start_revision=-1", 400, "invalid_argument"},
		{"start_revision=x", 400, "invalid_argument"},
		{"end_revision=-3", 400, "invalid_argument"},
		{"order=up", 400, "invalid_argument"},
		{"order=ASCEND", 400, "invalid_argument"},
		{"prev_kv=yes", 400, "invalid_argument"},
		{"filters=noput,bogus", 400, "invalid_argument"},
		{"limit=0", 400, "invalid_argument"},
		{"limit=10001", 400, "invalid_argument"},
		{"limit=ten", 400, "invalid_argument"},
		{"page_token=AAAA", 400, "invalid_argument"},
		{"start_revision=5&end_revision=4", 400, "invalid_argument"},
		{"end_revision=8", 400, "future_revision"},
		{"start_revision=8", 400, "future_revision"},
	}
	for _, tt := range tests {
		rec := serve(t, h, "GET", "/v1/history?"+tt.query, "")
		if rec.Code != tt.status || errorCode(t, rec) != tt.code {
			t.Errorf("GET /v1/history?%s = %d %s, want %d %s", tt.query, rec.Code, rec.Body, tt.status, tt.code)
		}
	}

	// A token read before the compaction, whose next event it removes.
	page := getHistory(t, h, "limit=1")
	mustServe(t, h, http.StatusOK, "POST", "/v1/compact", `{"revision":5,"physical":true}`)
	for _, q := range []string{"start_revision=4", "start_revision=1&key=a", "page_token=" + url.QueryEscape(page.NextPageToken)} {
		rec := serve(t, h, "GET", "/v1/history?"+q, "")
		var e wire.ErrorResponse
		if rec.Code != http.StatusGone || json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Error.Code != "compacted" || e.Error.CompactRevision != 5 {
			t.Errorf("GET /v1/history?%s = %d %s, want 410 compacted with compact_revision 5", q, rec.Code, rec.Body)
		}
	}
	// At the compact revision: its delete is still there.
	b := getHistory(t, h, "start_revision=5&key=a")
	if got := historyEvents(b); !slices.Equal(got, []string{"delete a@5", "put a=3@7"}) || b.CompactRevision != 5 {
		t.Errorf("GET /v1/history?start_revision=5&key=a = %q compact %d, want [delete a@5 put a=3@7] compact 5", got, b.CompactRevision)
	}
}

// recordingAuthorizer refuses every request and records what each asked.
type recordingAuthorizer struct{ asked []Access }

func (a *recordingAuthorizer) Authorize(_ *http.Request, acc Access) error {
	a.asked = append(a.asked, acc)
	return errorf(kv.CodePermissionDenied, "refused")
}

// TestHistoryAuthorization: a history read asks to read exactly its
// range, and is refused with the authorizer's answer.
func TestHistoryAuthorization(t *testing.T) {
	authz := &recordingAuthorizer{}
	h := newHandler(wiring{Backend: storetest.Open(t, embedded.Options{}), Authorizer: authz, Logger: zerolog.Nop()})
	tests := []struct {
		query string
		want  keyrange.Range
	}{
		{"key=a", keyrange.Range{Key: []byte("a")}},
		{"key=a%2F&prefix=true", keyrange.Range{Key: []byte("a/"), End: []byte("a0")}},
		{"key=a&range_end=c", keyrange.Range{Key: []byte("a"), End: []byte("c")}},
		{"", keyrange.Range{Key: []byte{0}, End: []byte{0}}},
	}
	for _, tt := range tests {
		authz.asked = nil
		rec := serve(t, h, "GET", "/v1/history?"+tt.query, "")
		if rec.Code != http.StatusForbidden || errorCode(t, rec) != "permission_denied" {
			t.Errorf("GET /v1/history?%s = %d %s, want 403 permission_denied", tt.query, rec.Code, rec.Body)
		}
		want := []Access{{Read: []keyrange.Range{tt.want}}}
		if fmt.Sprint(authz.asked) != fmt.Sprint(want) {
			t.Errorf("GET /v1/history?%s asked %v, want %v", tt.query, authz.asked, want)
		}
	}
}
