package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"time"
)

// maxWait is the longest a lock or a campaign waits in one request.
const maxWait = 5 * time.Minute

// LockResponse answers Client.Lock.
type LockResponse struct {
	Header Header `json:"header"`
	// Key is the owner key, name/<lease ID in hex>: Unlock takes it.
	Key []byte `json:"-"`
	// Raw is the answer's body as the server sent it.
	Raw json.RawMessage `json:"-"`
}

// Lock waits until lease holds the lock called name: POST
// /v1/locks/{name}. It waits as long as ctx lets it: the server waits 5
// minutes at most a request, and Lock then asks again (at the back of
// the queue). A ctx that ends while it waits leaves nothing behind. Keep
// the lease alive while holding the lock: the lock ends with it.
func (c *Client) Lock(ctx context.Context, name string, lease int64) (*LockResponse, error) {
	body, err := json.Marshal(struct {
		Lease int64 `json:"lease"`
	}{lease})
	if err != nil {
		return nil, err
	}
	var out struct {
		Header    Header  `json:"header"`
		Key       *string `json:"key"`
		KeyBase64 []byte  `json:"key_base64"`
	}
	raw, err := c.wait(ctx, request{method: http.MethodPost, path: "/v1/locks/" + escapeName(name), body: body, header: jsonHeader()}, &out)
	if err != nil {
		return nil, err
	}
	return &LockResponse{Header: out.Header, Key: twin(out.Key, out.KeyBase64), Raw: raw}, nil
}

// wait makes a call that waits on the server (a lock, a campaign) with
// the timeout ctx leaves, at most maxWait, asking again after a
// lock_timeout until ctx ends.
func (c *Client) wait(ctx context.Context, r request, out any) (json.RawMessage, error) {
	for {
		timeout := maxWait
		if d, ok := ctx.Deadline(); ok {
			timeout = min(timeout, max(0, time.Until(d)).Truncate(time.Millisecond))
		}
		r.query = url.Values{"timeout": {timeout.String()}}
		raw, err := c.do(ctx, r, out)
		if HasCode(err, CodeLockTimeout) && ctx.Err() == nil && timeout == maxWait {
			continue
		}
		if err != nil && ctx.Err() != nil {
			return nil, errors.Join(ctx.Err(), err)
		}
		return raw, err
	}
}

// Unlock releases the lock called name held by its owner key:
// DELETE /v1/locks/{name}.
func (c *Client) Unlock(ctx context.Context, name string, key []byte) (*HeaderResponse, error) {
	q := url.Values{}
	addBytes(q, "key", key)
	return call[HeaderResponse](ctx, c, request{method: http.MethodDelete, path: "/v1/locks/" + escapeName(name), query: q})
}

// LeaderKey is a candidacy that won an election: what Proclaim and
// Resign take back.
type LeaderKey struct {
	Name, Key []byte
	// Revision is the create revision of the candidate's key.
	Revision int64
	Lease    int64
}

type leaderKeyWire struct {
	Name       *string `json:"name,omitempty"`
	NameBase64 []byte  `json:"name_base64,omitempty"`
	Key        *string `json:"key,omitempty"`
	KeyBase64  []byte  `json:"key_base64,omitempty"`
	Revision   int64   `json:"revision"`
	Lease      int64   `json:"lease"`
}

// UnmarshalJSON reads a LeaderKey of the API.
func (l *LeaderKey) UnmarshalJSON(b []byte) error {
	var w leaderKeyWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*l = LeaderKey{Name: twin(w.Name, w.NameBase64), Key: twin(w.Key, w.KeyBase64), Revision: w.Revision, Lease: w.Lease}
	return nil
}

// MarshalJSON writes a LeaderKey as the API reads it.
func (l LeaderKey) MarshalJSON() ([]byte, error) {
	w := leaderKeyWire{Revision: l.Revision, Lease: l.Lease}
	w.Name, w.NameBase64 = splitTwin(l.Name)
	w.Key, w.KeyBase64 = splitTwin(l.Key)
	return json.Marshal(w)
}

// CampaignResponse answers Client.Campaign.
type CampaignResponse struct {
	Header Header    `json:"header"`
	Leader LeaderKey `json:"leader"`
	// Raw is the answer's body as the server sent it.
	Raw json.RawMessage `json:"-"`
}

// Campaign waits until lease leads the election called name, then
// proclaims value: POST /v1/elections/{name}/campaign. It waits as Lock
// does.
func (c *Client) Campaign(ctx context.Context, name string, lease int64, value []byte) (*CampaignResponse, error) {
	w := struct {
		Lease       int64   `json:"lease"`
		Value       *string `json:"value,omitempty"`
		ValueBase64 []byte  `json:"value_base64,omitempty"`
	}{Lease: lease}
	w.Value, w.ValueBase64 = splitTwin(value)
	body, err := json.Marshal(w)
	if err != nil {
		return nil, err
	}
	var out CampaignResponse
	raw, err := c.wait(ctx, request{method: http.MethodPost, path: electionPath(name) + "/campaign", body: body, header: jsonHeader()}, &out)
	if err != nil {
		return nil, err
	}
	out.Raw = raw
	return &out, nil
}

// Proclaim makes the leader's value value: POST
// /v1/elections/{name}/proclaim. A leader that no longer leads is an
// *Error not_leader.
func (c *Client) Proclaim(ctx context.Context, name string, leader LeaderKey, value []byte) (*HeaderResponse, error) {
	w := struct {
		Leader      LeaderKey `json:"leader"`
		Value       *string   `json:"value,omitempty"`
		ValueBase64 []byte    `json:"value_base64,omitempty"`
	}{Leader: leader}
	w.Value, w.ValueBase64 = splitTwin(value)
	body, err := json.Marshal(w)
	if err != nil {
		return nil, err
	}
	return call[HeaderResponse](ctx, c, request{method: http.MethodPost, path: electionPath(name) + "/proclaim", body: body, header: jsonHeader()})
}

// Resign gives up the leadership: POST /v1/elections/{name}/resign.
func (c *Client) Resign(ctx context.Context, name string, leader LeaderKey) (*HeaderResponse, error) {
	body, err := json.Marshal(struct {
		Leader LeaderKey `json:"leader"`
	}{leader})
	if err != nil {
		return nil, err
	}
	return call[HeaderResponse](ctx, c, request{method: http.MethodPost, path: electionPath(name) + "/resign", body: body, header: jsonHeader()})
}

// Leader reads the leader's key of the election called name: GET
// /v1/elections/{name}/leader. An empty office is an *Error no_leader.
func (c *Client) Leader(ctx context.Context, name string) (*GetResponse, error) {
	return call[GetResponse](ctx, c, request{method: http.MethodGet, path: electionPath(name) + "/leader"})
}

func electionPath(name string) string { return "/v1/elections/" + escapeName(name) }
