// Command convert turns the Swagger 2.0 document that swag generates into
// the OpenAPI 3.0 document httpkv serves at /openapi.json, and that the
// clients are generated from:
//
//	go run ./internal/convert swagger.json openapi3.json
//
// The conversion is kin-openapi's openapi2conv, followed by what Swagger
// 2.0 cannot say and OpenAPI 3.0 can:
//
//   - BearerAuth becomes an HTTP bearer scheme (2.0 knows only an API key
//     in the Authorization header).
//   - A 2.0 operation has one schema per response for all the media types
//     it produces. Error answers are JSON only; a raw value
//     (application/octet-stream) is bytes, and a watch stream
//     (text/event-stream) is text whose messages the operation describes.
//   - A request body of application/octet-stream is bytes.
//
// The result is validated before it is written.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: convert swagger.json openapi3.json")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "convert:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	v2, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	v3, err := convert(v2)
	if err != nil {
		return err
	}
	return os.WriteFile(out, v3, 0o644)
}

// convert returns the OpenAPI 3.0 document of the Swagger 2.0 one, as
// indented JSON.
func convert(v2 []byte) ([]byte, error) {
	var doc2 openapi2.T
	if err := json.Unmarshal(v2, &doc2); err != nil {
		return nil, fmt.Errorf("reading the Swagger 2.0 document: %w", err)
	}
	doc, err := openapi2conv.ToV3(&doc2)
	if err != nil {
		return nil, fmt.Errorf("converting to OpenAPI 3: %w", err)
	}
	if err := amend(doc); err != nil {
		return nil, err
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("the OpenAPI 3 document is not valid: %w", err)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

const (
	mimeJSON   = "application/json"
	mimeBytes  = "application/octet-stream"
	mimeStream = "text/event-stream"
)

// sseFraming describes the body of a text/event-stream answer; the
// operation's description says which messages it carries.
const sseFraming = "A Server-Sent Events stream (text/event-stream): blocks of `field: value` lines " +
	"ended by an empty line. A message's `data:` line holds one WatchMessage as JSON, its `event:` line names it " +
	"(none for the default message), and its `id:` line is the revision it brings the client to."

// amend says in OpenAPI 3 what the Swagger 2.0 document could not.
func amend(doc *openapi3.T) error {
	bearer, ok := doc.Components.SecuritySchemes["BearerAuth"]
	if !ok || bearer.Value == nil {
		return fmt.Errorf("the document has no BearerAuth security scheme")
	}
	bearer.Value = openapi3.NewSecurityScheme().
		WithType("http").
		WithScheme("bearer").
		WithDescription("A token from POST /v1/auth/token, as `Authorization: Bearer <token>`.")

	for _, path := range doc.Paths.InMatchingOrder() {
		for method, op := range doc.Paths.Value(path).Operations() {
			where := method + " " + path
			if rb := op.RequestBody; rb != nil && rb.Value != nil {
				if mt := rb.Value.Content.Get(mimeBytes); mt != nil {
					mt.Schema = binary()
				}
			}
			for code, resp := range op.Responses.Map() {
				if resp.Value == nil {
					return fmt.Errorf("%s: response %s is a reference", where, code)
				}
				if err := amendResponse(resp.Value); err != nil {
					return fmt.Errorf("%s: response %s: %w", where, code, err)
				}
			}
		}
	}
	return nil
}

func amendResponse(r *openapi3.Response) error {
	if schema := errorSchema(r); schema != nil {
		// Errors are JSON whatever the operation produces.
		r.Content = openapi3.NewContentWithJSONSchemaRef(schema)
		return nil
	}
	if mt := r.Content.Get(mimeBytes); mt != nil {
		mt.Schema = binary()
	}
	if mt := r.Content.Get(mimeStream); mt != nil {
		s := openapi3.NewStringSchema()
		s.Description = sseFraming
		mt.Schema = s.NewRef()
	}
	return nil
}

// errorSchema returns the reference to the Error object when that is
// what every media type of a response holds, and nil otherwise.
func errorSchema(r *openapi3.Response) *openapi3.SchemaRef {
	var schema *openapi3.SchemaRef
	for _, mt := range r.Content {
		if mt.Schema == nil || !strings.HasSuffix(mt.Schema.Ref, "/schemas/Error") {
			return nil
		}
		schema = mt.Schema
	}
	return schema
}

func binary() *openapi3.SchemaRef {
	return openapi3.NewStringSchema().WithFormat("binary").NewRef()
}
