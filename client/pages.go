package client

import (
	"context"
	"iter"
)

// page is an answer of a paged read.
type page interface {
	answer
	// next returns how many items the page holds, and the token of the
	// next page, "" after the last.
	next() (n int64, token string)
}

// pages follows the pages of a paged read: page(limit, token) is the
// request of a page of at most limit items (0 for the server's
// default), after token ("" for the first). limit caps the items over
// every page (0: none), pageSize those of one (0: defaultPage, -1: the
// server's default). The iterator stops at the first error, which it
// yields.
func pages[T any, P interface {
	*T
	page
}](ctx context.Context, c *Client, limit, pageSize int64, page func(limit int64, token string) request) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		size := int64(0)
		if pageSize >= 0 {
			size = min(cmp0(pageSize, defaultPage), maxPage)
		}
		left, token := limit, ""
		for {
			n := size
			if limit > 0 {
				n = min(cmp0(n, left), left)
			}
			out, err := call[T, P](ctx, c, page(n, token))
			if err != nil {
				yield(nil, err)
				return
			}
			got, next := P(out).next()
			left -= got
			if !yield(out, nil) || next == "" || limit > 0 && left <= 0 {
				return
			}
			token = next
		}
	}
}

func (r *ListResponse) next() (int64, string) {
	if !r.More || len(r.KVs) == 0 {
		return int64(len(r.KVs)), "" // count_only reads no page after the first
	}
	return int64(len(r.KVs)), r.NextPageToken
}

func (r *HistoryResponse) next() (int64, string) {
	if !r.More {
		return int64(len(r.Events)), ""
	}
	return int64(len(r.Events)), r.NextPageToken
}

func (r *LeaseListResponse) next() (int64, string) {
	if !r.More {
		return int64(len(r.Leases)), ""
	}
	return int64(len(r.Leases)), r.NextPageToken
}
