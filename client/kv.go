package client

import (
	"bytes"
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"net/url"
	"strconv"
)

// maxPage is the most keys or events the API answers in one page.
const maxPage = 10000

// defaultPage is the page size the iterators ask for.
const defaultPage = 1000

// GetOptions are the options of Client.Get.
type GetOptions struct {
	// Revision reads the key as it was then; 0 reads it now.
	Revision int64
}

// GetResponse answers Client.Get.
type GetResponse struct {
	Header Header   `json:"header"`
	KV     KeyValue `json:"kv"`
	// Raw is the answer's body as the server sent it.
	Raw json.RawMessage `json:"-"`
}

// Get reads one key: GET /v1/kv/{key}. A missing key is an *Error with
// the code key_not_found.
func (c *Client) Get(ctx context.Context, key string, o GetOptions) (*GetResponse, error) {
	q := url.Values{}
	setInt(q, "revision", o.Revision)
	return call[GetResponse](ctx, c, request{method: http.MethodGet, path: "/v1/kv/" + escapeKey([]byte(key)), query: q})
}

// ListOptions are the options of Client.List.
type ListOptions struct {
	// Revision reads the keys as they were then; 0 reads them now, and
	// every page at the first page's revision.
	Revision int64
	// Limit is the most keys to read over every page; 0 reads them all.
	Limit int64
	// PageSize is the most keys a page holds; 0 is 1000.
	PageSize int64
	// KeysOnly leaves the values out.
	KeysOnly bool
	// CountOnly reads how many keys there are, and none of them.
	CountOnly bool
}

// ListResponse is a page of Client.List.
type ListResponse struct {
	Header Header     `json:"header"`
	KVs    []KeyValue `json:"kvs"`
	// Count is how many keys the whole range holds, over every page.
	Count int64 `json:"count"`
	// More says that keys beyond this page remain.
	More          bool   `json:"more"`
	NextPageToken string `json:"next_page_token,omitempty"`
	// Raw is the answer's body as the server sent it.
	Raw json.RawMessage `json:"-"`
}

// List reads the keys of a range, in key order, a page at a time:
// GET /v1/kv, following next_page_token until the range, or o.Limit,
// is read. Every page is read at the first page's revision. The
// iterator stops at the first error, which it yields.
func (c *Client) List(ctx context.Context, sel Selector, o ListOptions) iter.Seq2[*ListResponse, error] {
	return pages[ListResponse](ctx, c, o.Limit, o.PageSize, func(limit int64, token string) request {
		q := url.Values{}
		sel.addQuery(q)
		setInt(q, "revision", o.Revision)
		setBool(q, "keys_only", o.KeysOnly)
		setBool(q, "count_only", o.CountOnly)
		setInt(q, "limit", limit)
		if token != "" {
			q.Set("page_token", token)
		}
		return request{method: http.MethodGet, path: "/v1/kv", query: q}
	})
}

// PutOptions are the options of Client.Put.
type PutOptions struct {
	// Lease attaches the key to that lease.
	Lease int64
	// TTL, in seconds, gives the key a lease of its own: it expires by
	// itself unless the lease is kept alive. Not with Lease.
	TTL int64
	// IfMatch puts only if the key's mod revision is this one (the
	// answer is then an *Error precondition_failed otherwise).
	IfMatch int64
	// IfAbsent puts only if the key does not exist.
	IfAbsent bool
	// PrevKV asks for the key as it was before.
	PrevKV bool
}

// PutResponse answers Client.Put.
type PutResponse struct {
	Header Header `json:"header"`
	// PrevKV is the key before the put, with PrevKV and when it existed.
	PrevKV *KeyValue `json:"prev_kv,omitempty"`
	// Lease is the key's own lease, with TTL.
	Lease int64 `json:"lease,omitempty"`
	// Raw is the answer's body as the server sent it.
	Raw json.RawMessage `json:"-"`
}

// Put writes value to key: PUT /v1/kv/{key}.
func (c *Client) Put(ctx context.Context, key string, value []byte, o PutOptions) (*PutResponse, error) {
	q := url.Values{}
	setInt(q, "lease", o.Lease)
	setInt(q, "ttl", o.TTL)
	setBool(q, "prev_kv", o.PrevKV)
	h := http.Header{"Content-Type": {"application/octet-stream"}}
	conditions(h, o.IfMatch, o.IfAbsent)
	if value == nil {
		value = []byte{}
	}
	return call[PutResponse](ctx, c, request{method: http.MethodPut, path: "/v1/kv/" + escapeKey([]byte(key)), query: q, header: h, body: value})
}

// conditions sets the conditional headers of a write.
func conditions(h http.Header, ifMatch int64, ifAbsent bool) {
	if ifMatch > 0 {
		h.Set("If-Match", strconv.Quote(strconv.FormatInt(ifMatch, 10)))
	}
	if ifAbsent {
		h.Set("If-None-Match", "*")
	}
}

// The kinds of patch Client.Patch sends.
const (
	// MergePatch is a JSON Merge Patch (RFC 7396): an object whose
	// fields replace those of the value, null deleting one.
	MergePatch = "application/merge-patch+json"
	// JSONPatch is a JSON Patch (RFC 6902): an array of operations.
	JSONPatch = "application/json-patch+json"
)

// PatchOptions are the options of Client.Patch.
type PatchOptions struct {
	// Type is MergePatch or JSONPatch; empty is JSONPatch for a patch
	// that is a JSON array, MergePatch otherwise.
	Type string
	// IfMatch applies the patch only to that mod revision of the key.
	IfMatch int64
}

// PatchResponse answers Client.Patch.
type PatchResponse struct {
	Header Header `json:"header"`
	// KV is the key as the patch left it.
	KV KeyValue `json:"kv"`
	// Raw is the answer's body as the server sent it.
	Raw json.RawMessage `json:"-"`
}

// Patch changes part of the JSON value of key: PATCH /v1/kv/{key}.
func (c *Client) Patch(ctx context.Context, key string, patch []byte, o PatchOptions) (*PatchResponse, error) {
	typ := o.Type
	if typ == "" {
		typ = MergePatch
		if t := bytes.TrimLeft(patch, " \t\r\n"); len(t) > 0 && t[0] == '[' {
			typ = JSONPatch
		}
	}
	h := http.Header{"Content-Type": {typ}}
	conditions(h, o.IfMatch, false)
	return call[PatchResponse](ctx, c, request{method: http.MethodPatch, path: "/v1/kv/" + escapeKey([]byte(key)), header: h, body: patch})
}

// DeleteOptions are the options of Client.Delete.
type DeleteOptions struct {
	// PrevKV asks for the deleted keys as they were.
	PrevKV bool
	// IfMatch deletes a single key only if its mod revision is this one.
	IfMatch int64
}

// DeleteResponse answers Client.Delete.
type DeleteResponse struct {
	Header Header `json:"header"`
	// Deleted is how many keys were deleted; deleting none makes no revision.
	Deleted int64      `json:"deleted"`
	PrevKVs []KeyValue `json:"prev_kvs,omitempty"`
	// Raw is the answer's body as the server sent it.
	Raw json.RawMessage `json:"-"`
}

// Delete deletes a key, or every key of a range: DELETE /v1/kv/{key},
// or DELETE /v1/kv with the range's selectors.
func (c *Client) Delete(ctx context.Context, sel Selector, o DeleteOptions) (*DeleteResponse, error) {
	q := url.Values{}
	setBool(q, "prev_kv", o.PrevKV)
	r := request{method: http.MethodDelete, query: q, header: http.Header{}}
	if sel.IsKey() {
		r.path = "/v1/kv/" + escapeKey(sel.Key)
		conditions(r.header, o.IfMatch, false)
	} else {
		r.path = "/v1/kv"
		sel.addQuery(q)
	}
	return call[DeleteResponse](ctx, c, r)
}

// TxnResponse answers Client.Txn.
type TxnResponse struct {
	Header Header `json:"header"`
	// Succeeded says that every compare held, so that the success ops ran.
	Succeeded bool `json:"succeeded"`
	// Responses holds the answer of each op of the branch that ran.
	Responses []ResponseOp `json:"responses"`
	// Raw is the answer's body as the server sent it (not set on a nested txn).
	Raw json.RawMessage `json:"-"`
}

// ResponseOp is the answer to one op of a txn: the field of its kind.
type ResponseOp struct {
	Put    *PutResponse    `json:"put,omitempty"`
	Delete *DeleteResponse `json:"delete,omitempty"`
	Range  *ListResponse   `json:"range,omitempty"`
	Txn    *TxnResponse    `json:"txn,omitempty"`
}

// Txn runs a transaction: POST /v1/txn. txn is its JSON (API.md, "POST
// /v1/txn"), as []byte or json.RawMessage, or a value that encodes to it.
func (c *Client) Txn(ctx context.Context, txn any) (*TxnResponse, error) {
	body, err := jsonBody(txn)
	if err != nil {
		return nil, err
	}
	return call[TxnResponse](ctx, c, request{method: http.MethodPost, path: "/v1/txn", body: body, header: jsonHeader()})
}

// jsonBody is v encoded, or v itself when it is JSON already.
func jsonBody(v any) ([]byte, error) {
	switch b := v.(type) {
	case []byte:
		return b, nil
	case json.RawMessage:
		return b, nil
	}
	return json.Marshal(v)
}

func jsonHeader() http.Header { return http.Header{"Content-Type": {"application/json"}} }

// setInt sets a query parameter unless n is 0.
func setInt(q url.Values, name string, n int64) {
	if n != 0 {
		q.Set(name, strconv.FormatInt(n, 10))
	}
}

// setBool sets a query parameter to true when b is.
func setBool(q url.Values, name string, b bool) {
	if b {
		q.Set(name, "true")
	}
}

// cmp0 is n, or def when n is 0 or less.
func cmp0(n, def int64) int64 {
	if n <= 0 {
		return def
	}
	return n
}
