package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
)

// Export is a range being exported: Header and Count come from the
// first line, and reading it gives the whole file as the server sends
// it (that first line, then one KeyValue a line, in key order), which
// Client.Import takes back as it is. Close it when done.
type Export struct {
	Header Header
	// Count is how many keys follow the first line.
	Count int64

	r    io.Reader // the first line, then the rest of body
	body io.ReadCloser
}

// Read reads the export, its first line included.
func (e *Export) Read(p []byte) (int, error) { return e.r.Read(p) }

// Close ends the export.
func (e *Export) Close() error { return e.body.Close() }

// maxExportHead is the longest first line of an export that Export reads.
const maxExportHead = 64 << 10

// Export streams every key of a range at one revision, however many:
// GET /v1/export as application/x-ndjson. revision 0 exports now.
func (c *Client) Export(ctx context.Context, sel Selector, revision int64) (*Export, error) {
	q := url.Values{}
	sel.addQuery(q)
	setInt(q, "revision", revision)
	resp, err := c.send(ctx, request{method: http.MethodGet, path: "/v1/export", query: q, header: http.Header{"Accept": {"application/x-ndjson"}}})
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return nil, answerError(resp, body)
	}
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	line, err := br.ReadSlice('\n')
	if err != nil {
		resp.Body.Close()
		return nil, &ConnError{Method: http.MethodGet, URL: c.base + "/v1/export", Err: fmt.Errorf("reading the first line: %w", err)}
	}
	var head struct {
		Header *Header `json:"header"`
		Count  int64   `json:"count"`
	}
	if err := json.Unmarshal(line, &head); err != nil || head.Header == nil {
		resp.Body.Close()
		return nil, fmt.Errorf("GET /v1/export: the first line is not {\"header\",\"count\"}: %.200q", line)
	}
	return &Export{Header: *head.Header, Count: head.Count, r: io.MultiReader(bytes.NewReader(bytes.Clone(line)), br), body: resp.Body}, nil
}

// ImportOptions are the options of Client.Import.
type ImportOptions struct {
	// Scope is the range the import may change; every key of the file
	// must be in it. The zero Selector is every key.
	Scope Selector
	// Replace also deletes the keys of Scope that the file lacks;
	// without it, the import puts what differs and deletes nothing.
	Replace bool
	// DryRun changes nothing and answers what would change.
	DryRun bool
	// IfMatch applies the import only if nothing in Scope changed after
	// that revision.
	IfMatch int64
}

// ImportResponse answers Client.Import and Client.Restore.
type ImportResponse struct {
	Header    Header `json:"header"`
	Created   int64  `json:"created"`
	Updated   int64  `json:"updated"`
	Deleted   int64  `json:"deleted"`
	Unchanged int64  `json:"unchanged"`
	// Keys lists the keys created, updated and deleted, at most 1000 of
	// each, as the server sent them.
	Keys json.RawMessage `json:"keys"`
	// Raw is the answer's body as the server sent it.
	Raw json.RawMessage `json:"-"`
}

// Import makes the keys of Scope those of an export file (NDJSON of
// objects with a key and a value), at one revision: POST /v1/import.
// size is the file's length, or -1 if unknown. The server takes at most
// its --max-import-bytes.
func (c *Client) Import(ctx context.Context, file io.Reader, size int64, o ImportOptions) (*ImportResponse, error) {
	q := url.Values{}
	if o.Scope.Key != nil || o.Scope.Prefix || o.Scope.FromKey {
		o.Scope.addQuery(q)
	}
	if o.Replace {
		q.Set("mode", "replace")
	}
	setBool(q, "dry_run", o.DryRun)
	h := http.Header{"Content-Type": {"application/x-ndjson"}}
	if o.IfMatch > 0 {
		h.Set("If-Match", strconv.Quote(strconv.FormatInt(o.IfMatch, 10)))
	}
	return call[ImportResponse](ctx, c, request{method: http.MethodPost, path: "/v1/import", query: q, header: h, stream: file, streamSize: size})
}

// Restore makes the keys of a range what they were at revision, in one
// new revision: POST /v1/restore. With dryRun it changes nothing and
// answers what would change.
func (c *Client) Restore(ctx context.Context, sel Selector, revision int64, dryRun bool) (*ImportResponse, error) {
	body, err := json.Marshal(struct {
		selectorWire
		Revision int64 `json:"revision"`
		DryRun   bool  `json:"dry_run,omitempty"`
	}{sel.wire(), revision, dryRun})
	if err != nil {
		return nil, err
	}
	return call[ImportResponse](ctx, c, request{method: http.MethodPost, path: "/v1/restore", body: body, header: jsonHeader()})
}
