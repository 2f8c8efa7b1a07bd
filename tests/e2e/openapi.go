package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/httpkv/httpkv/openapi"
)

// apiDoc is the OpenAPI 3 document that every answer is checked against,
// loaded once per test process and made strict (strictSchemas).
var apiDoc struct {
	once   sync.Once
	doc    *openapi3.T
	router routers.Router
	err    error
}

// LoadAPIDoc returns the OpenAPI document of this checkout and a router
// over its paths, loaded once.
func LoadAPIDoc() (*openapi3.T, routers.Router, error) {
	apiDoc.once.Do(func() {
		// The console's page is text; the validator only needs to know that.
		openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.PlainBodyDecoder)
		// So is an export, as a whole; exportTo checks each of its lines.
		openapi3filter.RegisterBodyDecoder("application/x-ndjson", openapi3filter.PlainBodyDecoder)
		doc, err := openapi.Load()
		if err != nil {
			apiDoc.err = err
			return
		}
		strictSchemas(doc)
		// Route by path alone, whatever address the server listens on.
		doc.Servers = nil
		apiDoc.router, apiDoc.err = gorillamux.NewRouter(doc)
		apiDoc.doc = doc
	})
	return apiDoc.doc, apiDoc.router, apiDoc.err
}

// strictSchemas forbids, in every named schema of the document, the
// properties it does not list. The published document leaves objects open
// (API.md welcomes extensions, and clients should ignore fields they do
// not know), but here a field the server sends and the document does not
// describe is a stale document.
func strictSchemas(doc *openapi3.T) {
	no := false
	seen := map[*openapi3.Schema]bool{}
	var walk func(s *openapi3.SchemaRef)
	walk = func(s *openapi3.SchemaRef) {
		if s == nil || s.Value == nil || seen[s.Value] {
			return
		}
		v := s.Value
		seen[v] = true
		if v.Type.Is(openapi3.TypeObject) && v.AdditionalProperties.Has == nil && v.AdditionalProperties.Schema == nil {
			v.AdditionalProperties.Has = &no
		}
		for _, p := range v.Properties {
			walk(p)
		}
		walk(v.Items)
	}
	for _, s := range doc.Components.Schemas {
		walk(s)
	}
}

// routable returns the escaped path and query of target as the document's
// routes match it. A key in /v1/kv/{key} is everything after the prefix,
// slashes included, which a path template cannot say: they are escaped
// for matching only.
func routable(target string) string {
	const kv = "/v1/kv/"
	path, query, hasQuery := strings.Cut(target, "?")
	if key, ok := strings.CutPrefix(path, kv); ok && key != "" {
		path = kv + strings.ReplaceAll(key, "/", "%2F")
	}
	if hasQuery {
		return path + "?" + query
	}
	return path
}

// MatchDocument reports how an answer does not match the document: its
// status must be one the operation lists, and its headers and body (unless
// stream: a watch's body is checked message by message) must match that
// response. An answer to a request the document has no operation for (an
// unknown path or method, the empty key) must be an error.
func MatchDocument(r *Reply, stream bool) error {
	doc, router, err := LoadAPIDoc()
	if err != nil {
		return fmt.Errorf("loading the OpenAPI document: %w", err)
	}
	method, target, _ := strings.Cut(r.Req, " ")
	req, err := http.NewRequest(method, "http://httpkv.test"+routable(target), nil)
	if err != nil {
		return err
	}
	route, params, err := router.FindRoute(req)
	if err != nil {
		if !errors.Is(err, routers.ErrPathNotFound) && !errors.Is(err, routers.ErrMethodNotAllowed) {
			return fmt.Errorf("finding the operation: %w", err)
		}
		if r.Status < 400 {
			return fmt.Errorf("status %d, but the document has no operation %s (%v)", r.Status, r.Req, err)
		}
		return MatchSchema(doc, "ErrorResponse", r.Body)
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 r.Status,
		Header:                 r.Header,
		Body:                   io.NopCloser(bytes.NewReader(r.Body)),
		Options: &openapi3filter.Options{
			IncludeResponseStatus: true,
			ExcludeResponseBody:   stream,
			MultiError:            true,
		},
	}
	in.Options.WithCustomSchemaErrorFunc(schemaError)
	return openapi3filter.ValidateResponse(context.Background(), in)
}

// MatchSchema reports how a JSON document does not match the named schema.
func MatchSchema(doc *openapi3.T, name string, body []byte) error {
	ref := doc.Components.Schemas[name]
	if ref == nil || ref.Value == nil {
		return fmt.Errorf("the document has no schema %s", name)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if err := ref.Value.VisitJSON(v, openapi3.MultiErrors(), openapi3.SetSchemaErrorMessageCustomizer(schemaError)); err != nil {
		return fmt.Errorf("as %s: %w", name, err)
	}
	return nil
}

// schemaError says where a value does not match its schema and why,
// without the whole schema.
func schemaError(err *openapi3.SchemaError) string {
	return fmt.Sprintf("at /%s: %s", strings.Join(err.JSONPointer(), "/"), err.Reason)
}

// checkDocument fails the test unless the answer matches the document.
func checkDocument(tb testing.TB, r *Reply) {
	tb.Helper()
	if err := MatchDocument(r, false); err != nil {
		tb.Fatalf("%s = %d %s: does not match the OpenAPI document: %v", r.Req, r.Status, Clip(r.Body), err)
	}
}

// CheckStreamHead fails the test unless a watch's status and headers
// match the document.
func CheckStreamHead(tb testing.TB, req string, resp *http.Response) {
	tb.Helper()
	if err := MatchDocument(&Reply{Req: req, Status: resp.StatusCode, Header: resp.Header}, true); err != nil {
		tb.Fatalf("%s = %d %v: does not match the OpenAPI document: %v", req, resp.StatusCode, resp.Header, err)
	}
}

// CheckWatchMessage fails the test unless a watch message's JSON is a
// WatchMessage of the document.
func CheckWatchMessage(tb testing.TB, req string, data []byte) {
	tb.Helper()
	doc, _, err := LoadAPIDoc()
	if err == nil {
		err = MatchSchema(doc, "WatchMessage", data)
	}
	if err != nil {
		tb.Fatalf("%s: message %s does not match the OpenAPI document: %v", req, Clip(data), err)
	}
}

// Clip shortens a body for a message.
func Clip(b []byte) []byte {
	const max = 2048
	b = bytes.TrimSpace(b)
	if len(b) > max {
		return append(b[:max:max], "..."...)
	}
	return b
}

// NeedPrograms skips the test when err says that a program it needs is
// missing (what says which), or fails it on CI (CI set), where every
// program must be there.
func NeedPrograms(tb testing.TB, what string, err error) {
	tb.Helper()
	if err == nil {
		return
	}
	if os.Getenv("CI") != "" {
		tb.Fatalf("%s: %v", what, err)
	}
	tb.Skipf("%s: %v", what, err)
}
