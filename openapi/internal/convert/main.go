// Command convert turns the Swagger 2.0 document that swag generates into
// the OpenAPI 3.0 document httpkv serves at /openapi.json, and that the
// clients are generated from:
//
//	go run ./internal/convert swagger.json openapi3.json
//
// The conversion is kin-openapi's openapi2conv, followed by what Swagger
// 2.0 cannot say and OpenAPI 3.0 can, so that generic client generators
// make working clients of it (amend.go):
//
//   - BearerAuth becomes an HTTP bearer scheme (2.0 knows only an API key
//     in the Authorization header).
//   - An operation without security requirements says so: security: [].
//   - A 2.0 operation has one schema per response for all the media types
//     it produces. Error answers are JSON only; a raw value
//     (application/octet-stream) is bytes. A stream (text/event-stream)
//     keeps its message schema, listed first, so that generators make a
//     streaming client whose messages are typed.
//   - A request body of application/octet-stream is bytes, or a string.
//   - A schema whose properties are all marked x-variant is a union: it
//     becomes oneOf those schemas, told apart by their "type" (2.0 has no
//     oneOf).
//
// The result is validated before it is written, with its media types in
// the order generators read them (order.go).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
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
	b, err = streamsFirst(b)
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
