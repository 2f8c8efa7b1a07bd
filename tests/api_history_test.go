package tests

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/httpkv/httpkv/openapi/client"
)

// historyString is the event in short: "put a=1@2", "delete a@5", with
// " (was a=2@4)" for a previous version.
func historyString(ev *client.WatchEvent) string {
	s := fmt.Sprintf("delete %s@%d", keyOf(&ev.Kv), ev.Kv.ModRevision)
	if ev.Type == "put" {
		s = fmt.Sprintf("put %s=%s@%d", keyOf(&ev.Kv), valueOf(&ev.Kv), ev.Kv.ModRevision)
	}
	if ev.PrevKv != nil {
		s += fmt.Sprintf(" (was %s=%s@%d)", keyOf(ev.PrevKv), valueOf(ev.PrevKv), ev.PrevKv.ModRevision)
	}
	return s
}

func historyStrings(evs []client.WatchEvent) []string {
	out := make([]string, len(evs))
	for i := range evs {
		out[i] = historyString(&evs[i])
	}
	return out
}

// history reads one page of GET /v1/history?query, which must answer 200.
func (s *server) history(tb testing.TB, query string, header ...string) client.HistoryResponse {
	tb.Helper()
	var h client.HistoryResponse
	r := s.do(tb, "GET", "/v1/history?"+query, nil, header...).ok(tb, http.StatusOK, &h)
	if h.More != (deref(h.NextPageToken) != "") {
		tb.Fatalf("%s = %s: more %v with next_page_token %q", r.req, r.body, h.More, deref(h.NextPageToken))
	}
	return h
}

// historyPages follows query to its last page, calling between after the
// first, and returns every event and how many pages there were.
func (s *server) historyPages(tb testing.TB, query string, between func()) ([]string, int) {
	tb.Helper()
	var all []string
	q := query
	for pages := 1; ; pages++ {
		h := s.history(tb, q)
		all = append(all, historyStrings(h.Events)...)
		if !h.More {
			return all, pages
		}
		if pages == 1 && between != nil {
			between()
		}
		if pages > 1000 {
			tb.Fatalf("GET /v1/history?%s: more than 1000 pages", query)
		}
		q = query + "&page_token=" + url.QueryEscape(deref(h.NextPageToken))
	}
}

// TestHistoryPagingEndToEnd: the history of a key, a prefix and every
// key, in both orders and pages of every size, equals the one big page,
// stays in the first page's window while writes go on, and descending is
// ascending reversed.
func TestHistoryPagingEndToEnd(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	// Revisions 2 to 8: put cfg/a, put cfg/b, put cfg/a, delete cfg/a, a
	// txn putting cfg/a and other, put cfg/\xff, delete the prefix cfg/.
	// Those are a fresh store's; a gateway's cluster may have taken
	// revisions before (its deployment's marker): at(n) is the revision
	// counted n on a fresh store.
	off := s.put(t, "cfg/a", "1") - 2
	at := func(n int64) int64 { return n + off }
	s.put(t, "cfg/b", "1")
	s.put(t, "cfg/a", "2")
	s.do(t, "DELETE", keyPath("cfg/a"), nil).want(t, http.StatusOK)
	s.txn(t, `{"success":[{"put":{"key":"cfg/a","value":"3"}},{"put":{"key":"other","value":"x"}}]}`).want(t, http.StatusOK)
	s.put(t, "cfg/\xff", "\xfe")
	s.do(t, "DELETE", "/v1/kv?key=cfg/&prefix=true", nil).want(t, http.StatusOK)

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
				got, pages := s.historyPages(t, query, func() { s.put(t, "cfg/a", "after the first page") })
				if !slices.Equal(got, wantOrder) || pages != (len(events)+limit-1)/limit {
					t.Errorf("GET /v1/history?%s over %d pages = %q, want %q in %d", query, pages, got, wantOrder, (len(events)+limit-1)/limit)
				}
				// Without end_revision, the first page's current revision
				// pins the window: the writes between pages are not in it.
				query = fmt.Sprintf("%s&order=%s&prev_kv=true&limit=%d", sel, order, limit)
				whole := s.history(t, fmt.Sprintf("%s&order=%s&prev_kv=true", sel, order))
				got, _ = s.historyPages(t, query, func() { s.put(t, "cfg/a", "after the first page") })
				if w := historyStrings(whole.Events); !slices.Equal(got, w) {
					t.Errorf("GET /v1/history?%s over every page = %q, want the one page %q", query, got, w)
				}
			}
		}
	}
	// Binary keys and values come as base64 twins.
	h := s.history(t, fmt.Sprintf("key_base64=%s&start_revision=%d&end_revision=%d", url.QueryEscape("Y2ZnL/8="), at(7), at(7)))
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
	s := startServer(t)
	// The revisions are a fresh store's; a gateway's cluster may have
	// taken some before (its deployment's marker): at(n) is the revision
	// counted n on a fresh store.
	off := s.put(t, "k", "1") - 2 // 2
	at := func(n int64) int64 { return n + off }
	s.put(t, "k", "2")                                          // 3
	s.put(t, "j", "1")                                          // 4
	s.do(t, "DELETE", keyPath("k"), nil).want(t, http.StatusOK) // 5
	s.put(t, "j", "2")                                          // 6

	asc := s.history(t, "limit=1")
	desc := s.history(t, "limit=1&order=descend")
	s.do(t, "POST", "/v1/compact", fmt.Appendf(nil, `{"revision":%d,"physical":true}`, at(5))).want(t, http.StatusOK)

	check := func(queries ...string) {
		t.Helper()
		for _, q := range append(queries, fmt.Sprintf("start_revision=%d", at(4)), "key=k&start_revision=1") {
			e := s.do(t, "GET", "/v1/history?"+q, nil).wantError(t, http.StatusGone, "compacted")
			if deref(e.CompactRevision) != at(5) {
				t.Errorf("GET /v1/history?%s: compact_revision %d, want %d", q, deref(e.CompactRevision), at(5))
			}
		}
		h := s.history(t, fmt.Sprintf("start_revision=%d&prev_kv=true", at(5)))
		if got, want := historyStrings(h.Events), shiftRevisions([]string{"delete k@5", "put j=2@6 (was j=1@4)"}, off); !slices.Equal(got, want) || h.CompactRevision != at(5) {
			t.Errorf("GET /v1/history?start_revision=%d = %q, compact_revision %d; want %q, %d", at(5), got, h.CompactRevision, want, at(5))
		}
		if got, want := historyStrings(s.history(t, "key=k").Events), shiftRevisions([]string{"delete k@5"}, off); !slices.Equal(got, want) {
			t.Errorf("GET /v1/history?key=k from the compact revision = %q, want %q", got, want)
		}
	}
	check("limit=1&page_token=" + url.QueryEscape(deref(asc.NextPageToken)))

	// A descending token reads down to the compact revision, then says
	// the rest is gone.
	q := "limit=1&order=descend&page_token="
	var got []string
	tok := deref(desc.NextPageToken)
	for range 10 {
		r := s.do(t, "GET", "/v1/history?"+q+url.QueryEscape(tok), nil)
		if r.status == http.StatusGone {
			break
		}
		var h client.HistoryResponse
		r.ok(t, http.StatusOK, &h)
		got = append(got, historyStrings(h.Events)...)
		if !h.More {
			t.Fatalf("%s = %s: the end, but the window reaches below the compaction", r.req, r.body)
		}
		tok = deref(h.NextPageToken)
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
	s := startServer(t)
	// The revisions are a fresh store's (a at 2, b at 3); a gateway's
	// cluster may have taken some before (its deployment's marker):
	// at(n) is the revision counted n on a fresh store.
	off := s.put(t, "a", "1") - 2
	at := func(n int64) int64 { return n + off }
	s.put(t, "b", "1")
	other := s.history(t, fmt.Sprintf("key=b&limit=1&end_revision=%d", at(2))).NextPageToken
	if deref(other) != "" {
		t.Fatalf("one event in the window, yet a next_page_token")
	}
	page := s.history(t, "limit=1")
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
		{"key=b&page_token=" + url.QueryEscape(deref(page.NextPageToken)), "invalid_argument"},
		{"order=descend&page_token=" + url.QueryEscape(deref(page.NextPageToken)), "invalid_argument"},
		{"page_token=" + url.QueryEscape(deref(page.NextPageToken)[1:]), "invalid_argument"},
	} {
		s.do(t, "GET", "/v1/history?"+tt.query, nil).wantError(t, http.StatusBadRequest, tt.code)
	}
	if h := s.history(t, "page_token="+url.QueryEscape(deref(page.NextPageToken))); len(h.Events) != 1 || historyString(&h.Events[0]) != fmt.Sprintf("put b=1@%d", at(3)) {
		t.Errorf("the second page = %q, want [put b=1@%d]", historyStrings(h.Events), at(3))
	}
}
