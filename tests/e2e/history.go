package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/httpkv/httpkv/openapi/client"
)

// HistoryString is the event in short: "put a=1@2", "delete a@5", with
// " (was a=2@4)" for a previous version.
func HistoryString(ev *client.WatchEvent) string {
	s := fmt.Sprintf("delete %s@%d", KeyOf(&ev.Kv), ev.Kv.ModRevision)
	if ev.Type == "put" {
		s = fmt.Sprintf("put %s=%s@%d", KeyOf(&ev.Kv), ValueOf(&ev.Kv), ev.Kv.ModRevision)
	}
	if ev.PrevKv != nil {
		s += fmt.Sprintf(" (was %s=%s@%d)", KeyOf(ev.PrevKv), ValueOf(ev.PrevKv), ev.PrevKv.ModRevision)
	}
	return s
}

// HistoryStrings is HistoryString of each event.
func HistoryStrings(evs []client.WatchEvent) []string {
	out := make([]string, len(evs))
	for i := range evs {
		out[i] = HistoryString(&evs[i])
	}
	return out
}

// History reads one page of GET /v1/history?query, which must answer 200.
func (s *Server) History(tb testing.TB, query string, header ...string) client.HistoryResponse {
	tb.Helper()
	var h client.HistoryResponse
	r := s.Do(tb, "GET", "/v1/history?"+query, nil, header...).Ok(tb, http.StatusOK, &h)
	if h.More != (Deref(h.NextPageToken) != "") {
		tb.Fatalf("%s = %s: more %v with next_page_token %q", r.Req, r.Body, h.More, Deref(h.NextPageToken))
	}
	return h
}

// HistoryPages follows query to its last page, calling between after the
// first, and returns every event and how many pages there were.
func (s *Server) HistoryPages(tb testing.TB, query string, between func()) ([]string, int) {
	tb.Helper()
	var all []string
	q := query
	for pages := 1; ; pages++ {
		h := s.History(tb, q)
		all = append(all, HistoryStrings(h.Events)...)
		if !h.More {
			return all, pages
		}
		if pages == 1 && between != nil {
			between()
		}
		if pages > 1000 {
			tb.Fatalf("GET /v1/history?%s: more than 1000 pages", query)
		}
		q = query + "&page_token=" + url.QueryEscape(Deref(h.NextPageToken))
	}
}
