// Package openapi holds the OpenAPI document of httpkv's HTTP API,
// generated from the annotations on the handlers of package httpapi.
//
// swagger.json (and swagger.yaml) is the Swagger 2.0 document that swag
// makes; openapi3.json is the OpenAPI 3.0 document converted from it
// (internal/convert), which the server serves at /openapi.json (and the
// 2.0 one at /swagger.json) and from which the Go client (client/) and the
// TypeScript client (ts/) are generated. None of these files is edited by
// hand: `go generate ./openapi/` makes them all again (generate.sh), and a
// test fails while the committed ones differ from what it makes.
package openapi
