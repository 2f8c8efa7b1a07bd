package client

import (
	"context"
	"encoding/json"
)

// answer is a decoded answer that keeps its body as Raw.
type answer interface{ setRaw(json.RawMessage) }

// call makes the call r and decodes its answer into a T, with the body
// as the server sent it in its Raw field.
func call[T any, P interface {
	*T
	answer
}](ctx context.Context, c *Client, r request) (*T, error) {
	var out T
	raw, err := c.do(ctx, r, &out)
	if err != nil {
		return nil, err
	}
	P(&out).setRaw(raw)
	return &out, nil
}

func (r *GetResponse) setRaw(b json.RawMessage)        { r.Raw = b }
func (r *ListResponse) setRaw(b json.RawMessage)       { r.Raw = b }
func (r *PutResponse) setRaw(b json.RawMessage)        { r.Raw = b }
func (r *PatchResponse) setRaw(b json.RawMessage)      { r.Raw = b }
func (r *DeleteResponse) setRaw(b json.RawMessage)     { r.Raw = b }
func (r *TxnResponse) setRaw(b json.RawMessage)        { r.Raw = b }
func (r *HistoryResponse) setRaw(b json.RawMessage)    { r.Raw = b }
func (r *LeaseResponse) setRaw(b json.RawMessage)      { r.Raw = b }
func (r *HeaderResponse) setRaw(b json.RawMessage)     { r.Raw = b }
func (r *LeaseListResponse) setRaw(b json.RawMessage)  { r.Raw = b }
func (r *TokenResponse) setRaw(b json.RawMessage)      { r.Raw = b }
func (r *AuthStatusResponse) setRaw(b json.RawMessage) { r.Raw = b }
func (r *UserResponse) setRaw(b json.RawMessage)       { r.Raw = b }
func (r *RoleResponse) setRaw(b json.RawMessage)       { r.Raw = b }
func (r *StatusResponse) setRaw(b json.RawMessage)     { r.Raw = b }
func (r *ImportResponse) setRaw(b json.RawMessage)     { r.Raw = b }
