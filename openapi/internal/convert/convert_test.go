package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

func TestStreamsFirst(t *testing.T) {
	in := `{"b":[1,"x<y",true,null,{"application/x-ndjson":{"s":1},"text/event-stream":{"s":2}}],"a":{"z":1.5,"text/event-stream":{}}}`
	out, err := streamsFirst([]byte(in))
	if err != nil {
		t.Fatalf("streamsFirst(%s) = %v", in, err)
	}
	want := `{"b":[1,"x\u003cy",true,null,{"text/event-stream":{"s":2},"application/x-ndjson":{"s":1}}],"a":{"text/event-stream":{},"z":1.5}}`
	if string(out) != want {
		t.Errorf("streamsFirst(%s)\n = %s\nwant %s", in, out, want)
	}
	if _, err := streamsFirst([]byte(`{"a":`)); err == nil {
		t.Errorf("streamsFirst of cut JSON succeeded")
	}
}

// variantDoc is a document whose schema U is a union of A and B.
func variantDoc(bType string) *openapi3.T {
	variant := func(typ string) *openapi3.SchemaRef {
		s := openapi3.NewObjectSchema().WithProperty("type", openapi3.NewStringSchema().WithEnum(typ))
		s.Required = []string{"type"}
		return s.NewRef()
	}
	mark := func(ref string) *openapi3.SchemaRef {
		s := &openapi3.Schema{AllOf: openapi3.SchemaRefs{openapi3.NewSchemaRef(ref, nil)}, Extensions: map[string]any{variantMark: true}}
		return s.NewRef()
	}
	union := openapi3.NewObjectSchema()
	union.Properties = openapi3.Schemas{"a": mark(schemaPrefix + "A"), "b": mark(schemaPrefix + "B")}
	return &openapi3.T{Components: &openapi3.Components{Schemas: openapi3.Schemas{
		"A": variant("first"), "B": variant(bType), "U": union.NewRef(),
		"Plain": openapi3.NewObjectSchema().WithProperty("x", openapi3.NewStringSchema()).NewRef(),
	}}}
}

func TestUnions(t *testing.T) {
	doc := variantDoc("second")
	if err := unions(doc.Components.Schemas); err != nil {
		t.Fatalf("unions = %v", err)
	}
	u := doc.Components.Schemas["U"].Value
	if len(u.OneOf) != 2 || u.OneOf[0].Ref != schemaPrefix+"A" || u.OneOf[1].Ref != schemaPrefix+"B" || len(u.Properties) != 0 {
		t.Errorf("U = %+v, want oneOf A, B and no properties", u)
	}
	if u.Discriminator == nil || u.Discriminator.PropertyName != "type" ||
		u.Discriminator.Mapping["first"].Ref != schemaPrefix+"A" || u.Discriminator.Mapping["second"].Ref != schemaPrefix+"B" {
		t.Errorf("U's discriminator = %+v, want type: first A, second B", u.Discriminator)
	}
	if p := doc.Components.Schemas["Plain"].Value; len(p.OneOf) != 0 || p.Properties["x"] == nil {
		t.Errorf("Plain = %+v, want it unchanged", p)
	}
	b, err := json.Marshal(u)
	if err != nil || !bytes.Contains(b, []byte(`"mapping":{"first":"#/components/schemas/A"`)) {
		t.Errorf("U marshals to %s (%v), want a mapping of plain references", b, err)
	}

	if err := unions(variantDoc("first").Components.Schemas); err == nil || !strings.Contains(err.Error(), "two variants") {
		t.Errorf("two variants of one type: unions = %v, want an error", err)
	}
	untyped := variantDoc("second")
	untyped.Components.Schemas["B"].Value.Required = nil
	if err := unions(untyped.Components.Schemas); err == nil {
		t.Errorf("a variant whose type is not required: unions succeeded")
	}
}
