package client

import (
	"context"
	"encoding/json"
	"net/http"
)

// StatusResponse answers Client.Status.
type StatusResponse struct {
	Header          Header `json:"header"`
	Version         string `json:"version"`
	Revision        int64  `json:"revision"`
	CompactRevision int64  `json:"compact_revision"`
	// DBSize is the size of the backend file in bytes, DBSizeInUse of
	// what it holds.
	DBSize      int64 `json:"db_size"`
	DBSizeInUse int64 `json:"db_size_in_use"`
	Keys        int64 `json:"keys"`
	Leases      int64 `json:"leases"`
	Watchers    struct {
		Synced   int64 `json:"synced"`
		Unsynced int64 `json:"unsynced"`
		Victims  int64 `json:"victims"`
	} `json:"watchers"`
	Alarms []string `json:"alarms"`
	// Raw is the answer's body as the server sent it.
	Raw json.RawMessage `json:"-"`
}

// Status reads the server's status: GET /v1/status.
func (c *Client) Status(ctx context.Context) (*StatusResponse, error) {
	return call[StatusResponse](ctx, c, request{method: http.MethodGet, path: "/v1/status"})
}

// Compact drops the history below revision: POST /v1/compact. With
// physical, it answers once the space is reclaimed.
func (c *Client) Compact(ctx context.Context, revision int64, physical bool) (*HeaderResponse, error) {
	body, err := json.Marshal(struct {
		Revision int64 `json:"revision"`
		Physical bool  `json:"physical,omitempty"`
	}{revision, physical})
	if err != nil {
		return nil, err
	}
	return call[HeaderResponse](ctx, c, request{method: http.MethodPost, path: "/v1/compact", body: body, header: jsonHeader()})
}
