package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

const (
	mimeBytes  = "application/octet-stream"
	mimeStream = "text/event-stream"

	schemaPrefix = "#/components/schemas/"
	// errorSchema is the body of every error answer.
	errorSchema = schemaPrefix + "ErrorResponse"
	// variantMark marks the properties of a union: see unions.
	variantMark = "x-variant"
	// discriminator is the property that tells a union's variants apart.
	discriminator = "type"
)

// sseFraming describes how a text/event-stream answer carries the
// messages of its schema; the operation's description says which they are.
const sseFraming = " As text/event-stream: Server-Sent Events, blocks of `field: value` lines ended by an empty line. " +
	"A message's data line holds one message of the schema as JSON, whose type field says which message it is; its event line, " +
	"when there is one, names it too, and its id line is the revision it brings the client to. Comment lines keep an idle connection open."

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
	if err := unions(doc.Components.Schemas); err != nil {
		return err
	}

	for _, path := range doc.Paths.InMatchingOrder() {
		for method, op := range doc.Paths.Value(path).Operations() {
			where := method + " " + path
			// swag writes no security for an operation that needs none;
			// generators and linters read that as "not said".
			if op.Security == nil {
				op.Security = openapi3.NewSecurityRequirements()
			}
			if rb := op.RequestBody; rb != nil && rb.Value != nil {
				if mt := rb.Value.Content.Get(mimeBytes); mt != nil {
					mt.Schema = bytesOrString()
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
	if schema := errorSchemaOf(r); schema != nil {
		// Errors are JSON whatever the operation produces.
		r.Content = openapi3.NewContentWithJSONSchemaRef(schema)
		return nil
	}
	if mt := r.Content.Get(mimeBytes); mt != nil {
		mt.Schema = binary()
	}
	if mt := r.Content.Get(mimeStream); mt != nil {
		if mt.Schema == nil || mt.Schema.Ref == "" {
			return fmt.Errorf("%s has no schema of its messages", mimeStream)
		}
		desc := strings.TrimSpace(*r.Description) + sseFraming
		r.Description = &desc
	}
	return nil
}

// errorSchemaOf returns the reference to the error object when that is
// what every media type of a response holds, and nil otherwise.
func errorSchemaOf(r *openapi3.Response) *openapi3.SchemaRef {
	var schema *openapi3.SchemaRef
	for _, mt := range r.Content {
		if mt.Schema == nil || mt.Schema.Ref != errorSchema {
			return nil
		}
		schema = mt.Schema
	}
	return schema
}

// unions turns every schema whose properties are all marked x-variant
// into a oneOf of the schemas they name, with a discriminator on "type":
// each variant has a required "type" whose enum is the one value that
// names it. Swagger 2.0 has no oneOf; a union of the wire types is how
// generators make a typed message of each variant.
func unions(schemas openapi3.Schemas) error {
	for _, name := range slices.Sorted(maps.Keys(schemas)) {
		s := schemas[name].Value
		if s == nil || len(s.Properties) == 0 || !allVariants(s) {
			continue
		}
		union := &openapi3.Schema{
			Description: s.Description,
			Discriminator: &openapi3.Discriminator{
				PropertyName: discriminator,
				Mapping:      map[string]openapi3.MappingRef{},
			},
		}
		for _, prop := range slices.Sorted(maps.Keys(s.Properties)) {
			ref, err := variantRef(s.Properties[prop])
			if err != nil {
				return fmt.Errorf("schema %s, variant %s: %w", name, prop, err)
			}
			variant := schemas[strings.TrimPrefix(ref, schemaPrefix)]
			value, err := variantName(variant, ref)
			if err != nil {
				return fmt.Errorf("schema %s, variant %s: %w", name, prop, err)
			}
			if _, dup := union.Discriminator.Mapping[value]; dup {
				return fmt.Errorf("schema %s: two variants are of type %q", name, value)
			}
			union.OneOf = append(union.OneOf, openapi3.NewSchemaRef(ref, variant.Value))
			union.Discriminator.Mapping[value] = openapi3.MappingRef{Ref: ref, Value: variant.Value}
		}
		schemas[name].Value = union
	}
	return nil
}

func allVariants(s *openapi3.Schema) bool {
	for _, p := range s.Properties {
		if p.Value == nil || p.Value.Extensions[variantMark] != true {
			return false
		}
	}
	return true
}

// variantRef returns the schema a variant property names: swag wraps the
// reference in allOf to carry the mark.
func variantRef(p *openapi3.SchemaRef) (string, error) {
	if len(p.Value.AllOf) != 1 || !strings.HasPrefix(p.Value.AllOf[0].Ref, schemaPrefix) {
		return "", fmt.Errorf("a variant must name one schema")
	}
	return p.Value.AllOf[0].Ref, nil
}

// variantName returns the value of "type" that names the variant v, the
// schema ref.
func variantName(v *openapi3.SchemaRef, ref string) (string, error) {
	if v == nil || v.Value == nil {
		return "", fmt.Errorf("no schema %s", ref)
	}
	typ := v.Value.Properties[discriminator]
	if typ == nil || typ.Value == nil || len(typ.Value.Enum) != 1 || !slices.Contains(v.Value.Required, discriminator) {
		return "", fmt.Errorf("%s needs a required %q with one enum value", ref, discriminator)
	}
	name, ok := typ.Value.Enum[0].(string)
	if !ok {
		return "", fmt.Errorf("%s: %q is not a string", ref, discriminator)
	}
	return name, nil
}

func binary() *openapi3.SchemaRef {
	return openapi3.NewStringSchema().WithFormat("binary").NewRef()
}

// bytesOrString is a body of bytes that a client may give as a string:
// generators then accept both (a string is sent as its UTF-8 bytes).
func bytesOrString() *openapi3.SchemaRef {
	s := openapi3.NewAnyOfSchema(openapi3.NewStringSchema(), openapi3.NewStringSchema().WithFormat("binary"))
	s.Description = "The value's bytes, byte for byte; a string is its UTF-8 bytes."
	return s.NewRef()
}
