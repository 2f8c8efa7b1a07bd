package openapi

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// The document is read by generic client generators; these tests check
// what they need of it. tests/docs/openapi_generator_test.go generates a client
// with one the project does not use, and runs it.

// streamMessages are the variants of a stream's message schema, by
// operation, told apart by their "type" (every stream must be such a
// union; these must be exactly so).
var streamMessages = map[string][]string{
	"GET /v1/watch":                    {"canceled", "compacted", "created", "events", "progress"},
	"GET /v1/watch/streams/{stream}":   {"canceled", "compacted", "created", "events", "progress"},
	"GET /v1/elections/{name}/observe": {"canceled", "compacted", "leader", "no_leader"},
}

// TestStreamsAreTyped: an operation answering text/event-stream lists it
// first (generators read the first media type as the kind of answer, and
// make a streaming client of it), and its messages are a oneOf whose
// discriminator maps each "type" to its schema.
func TestStreamsAreTyped(t *testing.T) {
	doc := load(t)
	first := firstMediaTypes(t, []byte(V3()))
	seen := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			where := method + " " + path
			for code, resp := range op.Responses.Map() {
				mt := resp.Value.Content.Get("text/event-stream")
				if mt == nil {
					continue
				}
				seen[where] = true
				if got := first[where+" "+code]; got != "text/event-stream" {
					t.Errorf("%s %s: the first media type is %q, want text/event-stream", where, code, got)
				}
				s := mt.Schema.Value
				if s == nil || len(s.OneOf) == 0 || s.Discriminator == nil || s.Discriminator.PropertyName != "type" ||
					len(s.Discriminator.Mapping) != len(s.OneOf) {
					t.Errorf("%s %s: the stream's schema %s is not a oneOf with a discriminator that maps each type to its variant", where, code, mt.Schema.Ref)
					continue
				}
				var got []string
				for value, ref := range s.Discriminator.Mapping {
					got = append(got, value)
					v := doc.Components.Schemas[strings.TrimPrefix(ref.Ref, "#/components/schemas/")]
					if v == nil || !slices.Contains(v.Value.Required, "type") || !slices.Equal(v.Value.Properties["type"].Value.Enum, []any{value}) {
						t.Errorf("%s: variant %q (%s) does not require type = %q", where, value, ref.Ref, value)
					}
				}
				slices.Sort(got)
				if want, ok := streamMessages[where]; ok && !slices.Equal(got, want) {
					t.Errorf("%s: the stream's messages are %q, want %q", where, got, want)
				}
			}
		}
	}
	for where := range streamMessages {
		if !seen[where] {
			t.Errorf("%s answers no text/event-stream", where)
		}
	}
}

// firstMediaTypes returns, by "METHOD path status", the first media type
// of each answer as the JSON text lists them.
func firstMediaTypes(t *testing.T, doc []byte) map[string]string {
	t.Helper()
	var raw struct {
		Paths map[string]map[string]struct {
			Responses map[string]struct {
				Content json.RawMessage `json:"content"`
			} `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(doc, &raw); err != nil {
		t.Fatal(err)
	}
	first := map[string]string{}
	for path, ops := range raw.Paths {
		for method, op := range ops {
			for code, resp := range op.Responses {
				if len(resp.Content) == 0 {
					continue
				}
				dec := json.NewDecoder(bytes.NewReader(resp.Content))
				if _, err := dec.Token(); err != nil { // {
					t.Fatal(err)
				}
				name, err := dec.Token()
				if err != nil {
					t.Fatal(err)
				}
				first[strings.ToUpper(method)+" "+path+" "+code], _ = name.(string)
			}
		}
	}
	return first
}

// TestBodiesOfBytes: a raw value is described as bytes beside the JSON
// answer, and a put's body may be given as a string or as bytes.
func TestBodiesOfBytes(t *testing.T) {
	doc := load(t)
	get := doc.Paths.Value("/v1/kv/{key}").Get.Responses.Status(200).Value.Content
	if get.Get("application/json") == nil {
		t.Errorf("GET /v1/kv/{key} 200: no application/json")
	}
	if raw := get.Get("application/octet-stream"); raw == nil || raw.Schema.Value.Format != "binary" {
		t.Errorf("GET /v1/kv/{key} 200: the raw value (application/octet-stream) is not described as binary")
	}
	body := doc.Paths.Value("/v1/kv/{key}").Put.RequestBody.Value.Content.Get("application/octet-stream")
	if body == nil {
		t.Fatalf("PUT /v1/kv/{key}: no application/octet-stream body")
	}
	var formats []string
	for _, s := range body.Schema.Value.AnyOf {
		if s.Value.Type.Is("string") {
			formats = append(formats, cmp.Or(s.Value.Format, "string"))
		}
	}
	slices.Sort(formats)
	if !slices.Equal(formats, []string{"binary", "string"}) {
		t.Errorf("PUT /v1/kv/{key}: the body accepts %q, want a string or binary", formats)
	}
}

// shadowed are names a generated client would give to something that
// shadows, or clashes with, a built-in of its language: JavaScript and
// TypeScript globals (the DOM's too), Java's java.lang, Swift, Kotlin and
// Python built-ins, and JavaScript's reserved words for operations.
var shadowed = []string{
	"Array", "Blob", "Boolean", "Date", "Document", "Element", "Error", "Event", "EventSource",
	"File", "Function", "Headers", "History", "Location", "Lock", "Map", "Math", "Node", "Number",
	"Object", "Promise", "Record", "RegExp", "Request", "Response", "Set", "Storage", "String",
	"Symbol", "Text", "URL", "Window", "Exception", "Class", "Thread", "Type", "Any", "Result",
	"console", "window", "document", "globalThis", "self", "fetch", "eval", "arguments", "delete",
	"new", "default", "function", "class", "import", "export", "return", "switch", "typeof",
}

// TestNamesShadowNothing: no schema and no operation is named like a
// built-in of the languages clients are generated in.
func TestNamesShadowNothing(t *testing.T) {
	doc := load(t)
	for name := range doc.Components.Schemas {
		if slices.ContainsFunc(shadowed, func(s string) bool { return strings.EqualFold(s, name) }) {
			t.Errorf("schema %q is named like a built-in of a client language", name)
		}
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if slices.ContainsFunc(shadowed, func(s string) bool { return strings.EqualFold(s, op.OperationID) }) {
				t.Errorf("%s %s: operationId %q is named like a built-in of a client language", method, path, op.OperationID)
			}
		}
	}
}

// escapedControl matches text that spells a control character as an
// escape, which generators turn into the character itself in the comments
// they write.
var escapedControl = regexp.MustCompile(`\\(u00[01][0-9a-fA-F]|x[01][0-9a-fA-F]|[0abfnrtv])`)

// TestNoControlCharacters: no string of the document holds a control
// character but a newline, nor spells one as an escape.
func TestNoControlCharacters(t *testing.T) {
	var doc any
	if err := json.Unmarshal([]byte(V3()), &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(at string, v any)
	walk = func(at string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				walk(at+"/"+k, e)
			}
		case []any:
			for i, e := range v {
				walk(fmt.Sprintf("%s/%d", at, i), e)
			}
		case string:
			if i := strings.IndexFunc(v, func(r rune) bool { return (r < 0x20 && r != '\n') || r == 0x7f }); i >= 0 {
				t.Errorf("%s: a control character %q in %q", at, v[i], v)
			}
			if m := escapedControl.FindString(v); m != "" {
				t.Errorf("%s: %q spells a control character, which generators write as the character: %q", at, m, v)
			}
		}
	}
	walk("", doc)
}

// TestPublicOperationsSaySo: every operation states its security, as an
// empty list for those that need no token (tests/docs/openapi_security_test.go
// checks each against the server with auth on).
func TestPublicOperationsSaySo(t *testing.T) {
	doc := load(t)
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.Security == nil {
				t.Errorf("%s %s: no security; an operation that needs no token says security: []", method, path)
			}
		}
	}
}

func load(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	return doc
}
