package openapi

import (
	_ "embed"
	"fmt"

	"github.com/getkin/kin-openapi/openapi3"
)

//go:embed swagger.json
var swagger2 string

//go:embed openapi3.json
var openAPI3 string

// V2 returns the Swagger 2.0 document, as JSON.
func V2() string { return swagger2 }

// V3 returns the OpenAPI 3.0 document, as JSON.
func V3() string { return openAPI3 }

// Load parses the OpenAPI 3.0 document and validates it. Each call returns
// a document of its own, which the caller may change.
func Load() (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData([]byte(openAPI3))
	if err != nil {
		return nil, fmt.Errorf("openapi: parsing the OpenAPI 3 document: %w", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("openapi: the OpenAPI 3 document is not valid: %w", err)
	}
	return doc, nil
}
