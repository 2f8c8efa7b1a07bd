package tests

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// TestHistoryPagingEndToEnd: the history of a key, a prefix and every
// key, in both orders and pages of every size, equals the one big page,
// stays in the first page's window while writes go on, and descending is
// ascending reversed.
func TestHistoryPagingEndToEnd(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	// Revisions 2 to 8: put cfg/a, put cfg/b, put cfg/a, delete cfg/a, a
	// txn putting cfg/a and other, put cfg/\xff, delete the prefix cfg/.
	// Those are a fresh store's; a gateway's cluster may have taken
	// revisions before (its deployment's marker): at(n) is the revision
	// counted n on a fresh store.
	off := s.Put(t, "cfg/a", "1") - 2
	at := func(n int64) int64 { return n + off }
	s.Put(t, "cfg/b", "1")
	s.Put(t, "cfg/a", "2")
	s.Do(t, "DELETE", e2e.KeyPath("cfg/a"), nil).Want(t, http.StatusOK)
	s.Txn(t, `{"success":[{"put":{"key":"cfg/a","value":"3"}},{"put":{"key":"other","value":"x"}}]}`).Want(t, http.StatusOK)
	s.Put(t, "cfg/\xff", "\xfe")
	s.Do(t, "DELETE", "/v1/kv?key=cfg/&prefix=true", nil).Want(t, http.StatusOK)

	want := map[string][]string{
		"key=cfg/a": {"put cfg/a=1@2", "put cfg/a=2@4 (was cfg/a=1@2)", "delete cfg/a@5 (was cfg/a=2@4)", "put cfg/a=3@6", "delete cfg/a@8 (was cfg/a=3@6)"},
		"key=cfg/&prefix=true": {"put cfg/a=1@2", "put cfg/b=1@3", "put cfg/a=2@4 (was cfg/a=1@2)", "delete cfg/a@5 (was cfg/a=2@4)", "put cfg/a=3@6",
			"put cfg/\xff=\xfe@7", "delete cfg/a@8 (was cfg/a=3@6)", "delete cfg/b@8 (was cfg/b=1@3)", "delete cfg/\xff@8 (was cfg/\xff=\xfe@7)"},
	}
	want[""] = slices.Insert(slices.Clone(want["key=cfg/&prefix=true"]), 5, "put other=x@6")
	for sel, events := range want {
		events = shiftRevisions(events, off)
		for _, order := range []string{"ascend", "descend"} {
			wantOrder := events
			if order == "descend" {
				wantOrder = slices.Clone(events)
				slices.Reverse(wantOrder)
			}
			for _, limit := range []int{1, 2, 4, 1000} {
				query := fmt.Sprintf("%s&order=%s&prev_kv=true&end_revision=%d&limit=%d", sel, order, at(8), limit)
				got, pages := s.HistoryPages(t, query, func() { s.Put(t, "cfg/a", "after the first page") })
				if !slices.Equal(got, wantOrder) || pages != (len(events)+limit-1)/limit {
					t.Errorf("GET /v1/history?%s over %d pages = %q, want %q in %d", query, pages, got, wantOrder, (len(events)+limit-1)/limit)
				}
				// Without end_revision, the first page's current revision
				// pins the window: the writes between pages are not in it.
				query = fmt.Sprintf("%s&order=%s&prev_kv=true&limit=%d", sel, order, limit)
				whole := s.History(t, fmt.Sprintf("%s&order=%s&prev_kv=true", sel, order))
				got, _ = s.HistoryPages(t, query, func() { s.Put(t, "cfg/a", "after the first page") })
				if w := e2e.HistoryStrings(whole.Events); !slices.Equal(got, w) {
					t.Errorf("GET /v1/history?%s over every page = %q, want the one page %q", query, got, w)
				}
			}
		}
	}
	// Binary keys and values come as base64 twins.
	h := s.History(t, fmt.Sprintf("key_base64=%s&start_revision=%d&end_revision=%d", url.QueryEscape("Y2ZnL/8="), at(7), at(7)))
	if len(h.Events) != 1 || h.Events[0].Kv.KeyBase64 == nil || h.Events[0].Kv.ValueBase64 == nil || h.Events[0].Kv.Key != nil {
		t.Errorf("GET /v1/history of cfg/\\xff = %+v, want one event with key_base64 and value_base64", h.Events)
	}
}

// TestHistoryCompactionEndToEnd: a start below the compact revision and
// a page token the compaction overtook answer 410 with the compact
// revision; the compact revision's own delete is still there, after a
// restart too.
func TestHistoryCompactionEndToEnd(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	// The revisions are a fresh store's; a gateway's cluster may have
	// taken some before (its deployment's marker): at(n) is the revision
	// counted n on a fresh store.
	off := s.Put(t, "k", "1") - 2 // 2
	at := func(n int64) int64 { return n + off }
	s.Put(t, "k", "2")                                              // 3
	s.Put(t, "j", "1")                                              // 4
	s.Do(t, "DELETE", e2e.KeyPath("k"), nil).Want(t, http.StatusOK) // 5
	s.Put(t, "j", "2")                                              // 6

	asc := s.History(t, "limit=1")
	desc := s.History(t, "limit=1&order=descend")
	s.Do(t, "POST", "/v1/compact", fmt.Appendf(nil, `{"revision":%d,"physical":true}`, at(5))).Want(t, http.StatusOK)

	check := func(queries ...string) {
		t.Helper()
		for _, q := range append(queries, fmt.Sprintf("start_revision=%d", at(4)), "key=k&start_revision=1") {
			e := s.Do(t, "GET", "/v1/history?"+q, nil).WantError(t, http.StatusGone, "compacted")
			if e2e.Deref(e.CompactRevision) != at(5) {
				t.Errorf("GET /v1/history?%s: compact_revision %d, want %d", q, e2e.Deref(e.CompactRevision), at(5))
			}
		}
		h := s.History(t, fmt.Sprintf("start_revision=%d&prev_kv=true", at(5)))
		if got, want := e2e.HistoryStrings(h.Events), shiftRevisions([]string{"delete k@5", "put j=2@6 (was j=1@4)"}, off); !slices.Equal(got, want) || h.CompactRevision != at(5) {
			t.Errorf("GET /v1/history?start_revision=%d = %q, compact_revision %d; want %q, %d", at(5), got, h.CompactRevision, want, at(5))
		}
		if got, want := e2e.HistoryStrings(s.History(t, "key=k").Events), shiftRevisions([]string{"delete k@5"}, off); !slices.Equal(got, want) {
			t.Errorf("GET /v1/history?key=k from the compact revision = %q, want %q", got, want)
		}
	}
	check("limit=1&page_token=" + url.QueryEscape(e2e.Deref(asc.NextPageToken)))

	// A descending token reads down to the compact revision, then says
	// the rest is gone.
	q := "limit=1&order=descend&page_token="
	var got []string
	tok := e2e.Deref(desc.NextPageToken)
	for range 10 {
		r := s.Do(t, "GET", "/v1/history?"+q+url.QueryEscape(tok), nil)
		if r.Status == http.StatusGone {
			break
		}
		var h client.HistoryResponse
		r.Ok(t, http.StatusOK, &h)
		got = append(got, e2e.HistoryStrings(h.Events)...)
		if !h.More {
			t.Fatalf("%s = %s: the end, but the window reaches below the compaction", r.Req, r.Body)
		}
		tok = e2e.Deref(h.NextPageToken)
	}
	if want := shiftRevisions([]string{"delete k@5"}, off); !slices.Equal(got, want) {
		t.Errorf("a descending token overtaken by the compaction gave %q then 410, want %q then 410", got, want)
	}

	s.Restart()
	check()
}

// TestHistoryErrorsEndToEnd: windows in the future or reversed, and bad
// parameters, answer 400 and say which.
func TestHistoryErrorsEndToEnd(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	// The revisions are a fresh store's (a at 2, b at 3); a gateway's
	// cluster may have taken some before (its deployment's marker):
	// at(n) is the revision counted n on a fresh store.
	off := s.Put(t, "a", "1") - 2
	at := func(n int64) int64 { return n + off }
	s.Put(t, "b", "1")
	other := s.History(t, fmt.Sprintf("key=b&limit=1&end_revision=%d", at(2))).NextPageToken
	if e2e.Deref(other) != "" {
		t.Fatalf("one event in the window, yet a next_page_token")
	}
	page := s.History(t, "limit=1")
	for _, tt := range []struct {
		query string
		code  string
	}{
		{fmt.Sprintf("end_revision=%d", at(4)), "future_revision"},
		{fmt.Sprintf("start_revision=%d", at(4)), "future_revision"},
		{fmt.Sprintf("start_revision=%d&end_revision=%d", at(3), at(2)), "invalid_argument"},
		{"order=newest", "invalid_argument"},
		{"filters=nothing", "invalid_argument"},
		{"limit=10001", "invalid_argument"},
		{"prev_kv=maybe", "invalid_argument"},
		{"key=a&from_key=true&prefix=true", "invalid_argument"},
		{"key=b&page_token=" + url.QueryEscape(e2e.Deref(page.NextPageToken)), "invalid_argument"},
		{"order=descend&page_token=" + url.QueryEscape(e2e.Deref(page.NextPageToken)), "invalid_argument"},
		{"page_token=" + url.QueryEscape(e2e.Deref(page.NextPageToken)[1:]), "invalid_argument"},
	} {
		s.Do(t, "GET", "/v1/history?"+tt.query, nil).WantError(t, http.StatusBadRequest, tt.code)
	}
	if h := s.History(t, "page_token="+url.QueryEscape(e2e.Deref(page.NextPageToken))); len(h.Events) != 1 || e2e.HistoryString(&h.Events[0]) != fmt.Sprintf("put b=1@%d", at(3)) {
		t.Errorf("the second page = %q, want [put b=1@%d]", e2e.HistoryStrings(h.Events), at(3))
	}
}
