package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/httpkv/httpkv/openapi/client"
)

// RangeState is the keys of a range as "k=v" lines, and the revision.
func (s *Server) RangeState(tb testing.TB, query string) (string, int64) {
	tb.Helper()
	var out []string
	var rev int64
	token := ""
	for {
		var res client.ListResponse
		q := query + "&limit=10000"
		if token != "" {
			q += "&page_token=" + token
		}
		s.Do(tb, "GET", "/v1/kv?"+q, nil).Ok(tb, http.StatusOK, &res)
		if rev == 0 {
			rev = res.Header.Revision
		}
		for i := range res.Kvs {
			out = append(out, KeyOf(&res.Kvs[i])+"="+ValueOf(&res.Kvs[i]))
		}
		if !res.More {
			return strings.Join(out, "\n"), rev
		}
		token = *res.NextPageToken
	}
}

// Reply is an HTTP answer read in full.
type Reply struct {
	Req    string // "PUT /v1/kv/a", for messages
	Status int
	Header http.Header
	Body   []byte
}

// Do sends a request to the server and reads the answer. header is a list
// of name, value pairs. Every answer passes CheckReply.
func (s *Server) Do(tb testing.TB, method, path string, body []byte, header ...string) *Reply {
	tb.Helper()
	return s.DoContext(tb, context.Background(), method, path, body, header...)
}

// DoContext is Do under ctx.
func (s *Server) DoContext(tb testing.TB, ctx context.Context, method, path string, body []byte, header ...string) *Reply {
	tb.Helper()
	r, err := s.Send(ctx, method, path, body, header...)
	if err != nil {
		tb.Fatal(err)
	}
	CheckReply(tb, r)
	return r
}

// DoServed is Do for a request the test needs served, whatever else the
// machine is doing: a 503 with Retry-After (a gateway whose etcd is too
// busy to answer its probes in time says so) is retried, a second
// apart, up to ten times. Only for requests that may be repeated.
func (s *Server) DoServed(tb testing.TB, method, path string, body []byte, header ...string) *Reply {
	tb.Helper()
	r := s.Do(tb, method, path, body, header...)
	for retries := 0; r.Status == http.StatusServiceUnavailable && r.Header.Get("Retry-After") != "" && retries < 10; retries++ {
		time.Sleep(time.Second)
		r = s.Do(tb, method, path, body, header...)
	}
	return r
}

// Send is do without the checks, and returning transport errors, for
// callers that expect them (a server being killed).
func (s *Server) Send(ctx context.Context, method, path string, body []byte, header ...string) (*Reply, error) {
	return s.SendWith(s.Client, ctx, method, path, body, header...)
}

// SendWith is send through client: s.streams, without the request
// timeout, for a request that may wait longer (a lock, a campaign) with
// ctx bounding it instead.
func (s *Server) SendWith(client *http.Client, ctx context.Context, method, path string, body []byte, header ...string) (*Reply, error) {
	if len(header)%2 != 0 {
		panic("header is a list of name, value pairs")
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.URL+path, rd)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	for i := 0; i < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading the body: %w", method, path, err)
	}
	return &Reply{Req: method + " " + path, Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

// CheckReply checks what holds for every answer of the API: it matches
// the OpenAPI document (checkDocument); a JSON body is one object with no
// key-like field next to its *_base64 twin; an error is
// {"error":{"code","message",...}}; and a header revision equals
// X-Revision.
func CheckReply(tb testing.TB, r *Reply) {
	tb.Helper()
	checkDocument(tb, r)
	isJSON := strings.HasPrefix(r.Header.Get("Content-Type"), "application/json")
	if r.Status >= 400 && !isJSON {
		tb.Fatalf("%s = %d with Content-Type %q, want an application/json error; body %q",
			r.Req, r.Status, r.Header.Get("Content-Type"), r.Body)
	}
	if !isJSON {
		return
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(r.Body, &obj); err != nil {
		tb.Fatalf("%s = %d with body %q: not a JSON object: %v", r.Req, r.Status, r.Body, err)
	}
	if r.Req == "GET /openapi.json" || r.Req == "GET /swagger.json" {
		return // the documents describe both twins of each field
	}
	if err := CheckTwins(r.Body); err != nil {
		tb.Fatalf("%s = %s: %v", r.Req, r.Body, err)
	}
	if strings.HasPrefix(r.Req, "GET /health") {
		// Health is an answer, not an error: {"health":false,...} with 503.
		var h struct {
			Health *bool `json:"health"`
		}
		if err := json.Unmarshal(r.Body, &h); err != nil || h.Health == nil || *h.Health != (r.Status == http.StatusOK) {
			tb.Fatalf("%s = %d %s, want {\"health\":true} with 200 or false with 503", r.Req, r.Status, r.Body)
		}
		return
	}
	if r.Status >= 400 {
		checkErrorBody(tb, r)
		return
	}
	raw, ok := obj["header"]
	if !ok && reflectsState(r.Req) {
		tb.Fatalf("%s = %d %s: no header", r.Req, r.Status, r.Body)
	}
	if ok {
		var h client.ResponseHeader
		if err := json.Unmarshal(raw, &h); err != nil || h.Revision <= 0 {
			tb.Fatalf("%s = %s: header %s has no positive revision", r.Req, r.Body, raw)
		}
		if got := r.Header.Get("X-Revision"); got != strconv.FormatInt(h.Revision, 10) {
			tb.Fatalf("%s: X-Revision = %q, want %d as in the body's header", r.Req, got, h.Revision)
		}
	}
}

// reflectsState reports whether a request's successful answer reflects
// the store's state, and so must carry a header.
func reflectsState(req string) bool {
	_, path, _ := strings.Cut(req, " ")
	path, _, _ = strings.Cut(path, "?")
	for _, p := range []string{"/v1/kv", "/v1/txn", "/v1/history", "/v1/leases", "/v1/compact", "/v1/status", "/v1/defrag", "/v1/alarms", "/v1/locks", "/v1/elections"} {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// checkErrorBody checks an error answer's shape: only "error" at the top,
// holding non-empty string "code" and "message".
func checkErrorBody(tb testing.TB, r *Reply) {
	tb.Helper()
	var top map[string]json.RawMessage
	if err := json.Unmarshal(r.Body, &top); err != nil || len(top) != 1 || top["error"] == nil {
		tb.Fatalf("%s = %d %s, want {\"error\":{...}} alone", r.Req, r.Status, r.Body)
	}
	var e map[string]any
	if err := json.Unmarshal(top["error"], &e); err != nil {
		tb.Fatalf("%s = %d %s: error is not an object", r.Req, r.Status, r.Body)
	}
	for _, f := range []string{"code", "message"} {
		if s, ok := e[f].(string); !ok || s == "" {
			tb.Fatalf("%s = %d %s: error.%s is not a non-empty string", r.Req, r.Status, r.Body, f)
		}
	}
}

// CheckTwins walks a JSON document and reports an object holding a field
// and its *_base64 twin both.
func CheckTwins(doc []byte) error {
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return err
	}
	var walk func(v any) error
	walk = func(v any) error {
		switch v := v.(type) {
		case map[string]any:
			for k, sub := range v {
				if strings.HasSuffix(k, "_base64") {
					if _, both := v[strings.TrimSuffix(k, "_base64")]; both {
						return fmt.Errorf("object has both %q and %q", strings.TrimSuffix(k, "_base64"), k)
					}
				}
				if err := walk(sub); err != nil {
					return err
				}
			}
		case []any:
			for _, sub := range v {
				if err := walk(sub); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(v)
}

// Want fails unless the answer has the status.
func (r *Reply) Want(tb testing.TB, status int) *Reply {
	tb.Helper()
	if r.Status != status {
		tb.Fatalf("%s = %d %s, want %d", r.Req, r.Status, bytes.TrimSpace(r.Body), status)
	}
	return r
}

// Decode unmarshals the body into v.
func (r *Reply) Decode(tb testing.TB, v any) {
	tb.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		tb.Fatalf("%s = %s: decoding into %T: %v", r.Req, r.Body, v, err)
	}
}

// Ok checks the status and decodes the body into v, if not nil.
func (r *Reply) Ok(tb testing.TB, status int, v any) *Reply {
	tb.Helper()
	r.Want(tb, status)
	if v != nil {
		r.Decode(tb, v)
	}
	return r
}

// WantError fails unless the answer is the error with the status and code,
// and returns it.
func (r *Reply) WantError(tb testing.TB, status int, code string) client.ErrorBody {
	tb.Helper()
	var body client.ErrorResponse
	if r.Status != status || json.Unmarshal(r.Body, &body) != nil || string(body.Error.Code) != code {
		tb.Fatalf("%s = %d %s, want %d with code %q", r.Req, r.Status, bytes.TrimSpace(r.Body), status, code)
	}
	return body.Error
}

// Revision returns the answer's header revision, which it must have.
func (r *Reply) Revision(tb testing.TB) int64 {
	tb.Helper()
	var body struct {
		Header *client.ResponseHeader `json:"header"`
	}
	r.Decode(tb, &body)
	if body.Header == nil {
		tb.Fatalf("%s = %s: no header", r.Req, r.Body)
	}
	return body.Header.Revision
}

// Put writes key=value and returns the put's revision.
func (s *Server) Put(tb testing.TB, key, value string) int64 {
	tb.Helper()
	var res client.PutResponse
	s.Do(tb, "PUT", KeyPath(key), []byte(value)).Ok(tb, http.StatusOK, &res)
	return res.Header.Revision
}

// Get reads key at the current revision; it must exist.
func (s *Server) Get(tb testing.TB, key string) client.KeyValue {
	tb.Helper()
	var res client.GetResponse
	s.Do(tb, "GET", KeyPath(key), nil).Ok(tb, http.StatusOK, &res)
	return res.Kv
}

// Status returns GET /v1/status.
func (s *Server) Status(tb testing.TB) client.Status {
	tb.Helper()
	var st client.Status
	s.Do(tb, "GET", "/v1/status", nil).Ok(tb, http.StatusOK, &st)
	return st
}

// Txn posts a txn given as a JSON document and returns its answer.
func (s *Server) Txn(tb testing.TB, doc string) *Reply {
	tb.Helper()
	return s.Do(tb, "POST", "/v1/txn", []byte(doc), "Content-Type", "application/json")
}

// Eventually polls cond every 10ms until it holds or timeout passes, and
// fails with what cond last said.
func Eventually(tb testing.TB, timeout time.Duration, cond func() (bool, string)) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("not within %v: %s", timeout, why)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
