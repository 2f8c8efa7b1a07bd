package client

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"net/url"
	"strings"
)

// HistoryOptions are the options of Client.History.
type HistoryOptions struct {
	// StartRevision is the first revision read; 0 is the oldest held
	// (the compact revision, or 1).
	StartRevision int64
	// EndRevision is the last revision read; 0 is the current one.
	EndRevision int64
	// Descend reads newest first.
	Descend bool
	// PrevKV adds each key as it was before the event.
	PrevKV bool
	// NoPut and NoDelete leave out puts, or deletes.
	NoPut, NoDelete bool
	// Limit is the most events to read over every page; 0 reads them all.
	Limit int64
	// PageSize is the most events a page holds; 0 is 1000.
	PageSize int64
}

// HistoryResponse is a page of Client.History.
type HistoryResponse struct {
	Header Header `json:"header"`
	// CompactRevision is the store's compact revision when the page was read.
	CompactRevision int64   `json:"compact_revision"`
	Events          []Event `json:"events"`
	More            bool    `json:"more"`
	NextPageToken   string  `json:"next_page_token,omitempty"`
	// Raw is the answer's body as the server sent it.
	Raw json.RawMessage `json:"-"`
}

// History reads what happened to a key or a range, a page at a time:
// GET /v1/history, following next_page_token. Every page reads the
// first page's window of revisions. The iterator stops at the first
// error, which it yields: history below the compact revision is an
// *Error for which errors.Is(err, ErrCompacted).
func (c *Client) History(ctx context.Context, sel Selector, o HistoryOptions) iter.Seq2[*HistoryResponse, error] {
	return pages[HistoryResponse](ctx, c, o.Limit, o.PageSize, func(limit int64, token string) request {
		q := url.Values{}
		sel.addQuery(q)
		setInt(q, "start_revision", o.StartRevision)
		setInt(q, "end_revision", o.EndRevision)
		if o.Descend {
			q.Set("order", "descend")
		}
		setBool(q, "prev_kv", o.PrevKV)
		if f := filters(o.NoPut, o.NoDelete); f != "" {
			q.Set("filters", f)
		}
		setInt(q, "limit", limit)
		if token != "" {
			q.Set("page_token", token)
		}
		return request{method: http.MethodGet, path: "/v1/history", query: q}
	})
}

// filters is the API's filters parameter.
func filters(noPut, noDelete bool) string {
	var f []string
	if noPut {
		f = append(f, "noput")
	}
	if noDelete {
		f = append(f, "nodelete")
	}
	return strings.Join(f, ",")
}
