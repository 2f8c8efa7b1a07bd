package httpapi

import (
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/httpkv/httpkv/openapi"
)

// undocumented are the routes the OpenAPI document leaves out: the
// console's own scripts and style sheet, which its page (GET /) loads.
var undocumented = map[string]bool{
	"GET /console.js":    true,
	"GET /console.css":   true,
	"GET /console/{key}": true,
}

// docPath returns the document's path of a chi route pattern.
func docPath(route string) string {
	if p, ok := strings.CutSuffix(route, "/*"); ok {
		// /v1/kv/* has a wildcard, the key, slashes and all; so has
		// /console/*, the console's modules.
		return p + "/{key}"
	}
	if route != "/" {
		route = strings.TrimSuffix(route, "/")
	}
	return route
}

// TestOpenAPICoversRoutes checks that every route of the router is an
// operation of the OpenAPI document, and every operation a route.
func TestOpenAPICoversRoutes(t *testing.T) {
	h, _ := newTestHandler(t, Config{})
	doc, err := openapi.Load()
	if err != nil {
		t.Fatal(err)
	}
	routed := map[string]bool{}
	err = chi.Walk(h.router, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if op := method + " " + docPath(route); !undocumented[op] {
			routed[op] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented[method+" "+path] = true
		}
	}
	var missing, extra []string
	for op := range routed {
		if !documented[op] {
			missing = append(missing, op)
		}
	}
	for op := range documented {
		if !routed[op] {
			extra = append(extra, op)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 {
		t.Errorf("routes without an operation in the OpenAPI document (annotate the handler, then go generate ./openapi/): %q", missing)
	}
	if len(extra) > 0 {
		t.Errorf("operations of the OpenAPI document that no route serves: %q", extra)
	}
}

// TestOpenAPIServed checks /openapi.json (OpenAPI 3.0) and /swagger.json
// (Swagger 2.0).
func TestOpenAPIServed(t *testing.T) {
	h, _ := newTestHandler(t, Config{})
	for _, tt := range []struct {
		path, want string
	}{
		{"/openapi.json", openapi.V3()},
		{"/swagger.json", openapi.V2()},
	} {
		rec := mustServe(t, h, http.StatusOK, "GET", tt.path, "")
		if ct := rec.Header().Get("Content-Type"); ct != "application/json; charset=utf-8" {
			t.Errorf("GET %s: Content-Type %q, want application/json; charset=utf-8", tt.path, ct)
		}
		if rec.Body.String() != tt.want {
			t.Errorf("GET %s: the body is not the embedded document", tt.path)
		}
	}
}
