package client

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"net/url"
	"strconv"
)

// LeaseResponse answers a grant or a keep-alive.
type LeaseResponse struct {
	Header Header `json:"header"`
	ID     int64  `json:"id"`
	// TTL is the lease's time to live in seconds, full again.
	TTL int64 `json:"ttl"`
	// Raw is the answer's body as the server sent it.
	Raw json.RawMessage `json:"-"`
}

// Grant grants a lease of ttl seconds: POST /v1/leases. id 0 lets the
// server choose its ID.
func (c *Client) Grant(ctx context.Context, ttl, id int64) (*LeaseResponse, error) {
	body, err := json.Marshal(struct {
		TTL int64 `json:"ttl"`
		ID  int64 `json:"id,omitempty"`
	}{ttl, id})
	if err != nil {
		return nil, err
	}
	return call[LeaseResponse](ctx, c, request{method: http.MethodPost, path: "/v1/leases", body: body, header: jsonHeader()})
}

// KeepAlive renews a lease for its whole TTL: POST /v1/leases/{id}/keepalive.
func (c *Client) KeepAlive(ctx context.Context, id int64) (*LeaseResponse, error) {
	return call[LeaseResponse](ctx, c, request{method: http.MethodPost, path: leasePath(id) + "/keepalive"})
}

// HeaderResponse answers the calls that say nothing but the revision
// (a revoke, an unlock, a compaction), or nothing at all (the changes of
// users and roles).
type HeaderResponse struct {
	Header Header `json:"header"`
	// Raw is the answer's body as the server sent it.
	Raw json.RawMessage `json:"-"`
}

// Revoke revokes a lease, deleting its keys at one revision:
// DELETE /v1/leases/{id}.
func (c *Client) Revoke(ctx context.Context, id int64) (*HeaderResponse, error) {
	return call[HeaderResponse](ctx, c, request{method: http.MethodDelete, path: leasePath(id)})
}

// LeaseTimeToLiveResponse answers Client.TimeToLive.
type LeaseTimeToLiveResponse struct {
	Header Header `json:"header"`
	ID     int64  `json:"id"`
	// TTL is the seconds left before the lease expires.
	TTL int64 `json:"ttl"`
	// GrantedTTL is the TTL the lease was granted with.
	GrantedTTL int64 `json:"granted_ttl"`
	// Keys are the keys attached to the lease that the caller may read,
	// when asked for.
	Keys [][]byte `json:"-"`
	// Raw is the answer's body as the server sent it.
	Raw json.RawMessage `json:"-"`
}

// TimeToLive reads a lease, and with keys the keys attached to it:
// GET /v1/leases/{id}.
func (c *Client) TimeToLive(ctx context.Context, id int64, keys bool) (*LeaseTimeToLiveResponse, error) {
	q := url.Values{}
	setBool(q, "keys", keys)
	var out struct {
		LeaseTimeToLiveResponse
		Keys       []string `json:"keys"`
		KeysBase64 [][]byte `json:"keys_base64"`
	}
	raw, err := c.do(ctx, request{method: http.MethodGet, path: leasePath(id), query: q}, &out)
	if err != nil {
		return nil, err
	}
	r := out.LeaseTimeToLiveResponse
	r.Raw = raw
	for _, k := range out.Keys {
		r.Keys = append(r.Keys, []byte(k))
	}
	r.Keys = append(r.Keys, out.KeysBase64...)
	return &r, nil
}

// LeaseListResponse is a page of Client.Leases.
type LeaseListResponse struct {
	Header Header `json:"header"`
	Leases []struct {
		ID int64 `json:"id"`
	} `json:"leases"`
	More          bool   `json:"more"`
	NextPageToken string `json:"next_page_token,omitempty"`
	// Raw is the answer's body as the server sent it.
	Raw json.RawMessage `json:"-"`
}

// LeaseListOptions are the options of Client.Leases.
type LeaseListOptions struct {
	// PageSize is the most leases a page holds; 0 is the server's default.
	PageSize int64
}

// Leases lists the leases by ascending ID, a page at a time: GET
// /v1/leases, following next_page_token. The iterator stops at the
// first error, which it yields.
func (c *Client) Leases(ctx context.Context, o LeaseListOptions) iter.Seq2[*LeaseListResponse, error] {
	pageSize := o.PageSize
	if pageSize == 0 {
		pageSize = -1 // the server's default
	}
	return pages[LeaseListResponse](ctx, c, 0, pageSize, func(limit int64, token string) request {
		q := url.Values{}
		setInt(q, "limit", limit)
		if token != "" {
			q.Set("page_token", token)
		}
		return request{method: http.MethodGet, path: "/v1/leases", query: q}
	})
}

func leasePath(id int64) string { return "/v1/leases/" + strconv.FormatInt(id, 10) }
