package openapi

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoad checks that the served document is a valid OpenAPI 3.0
// document with the bearer scheme, and the 2.0 one JSON.
func TestLoad(t *testing.T) {
	doc, err := Load()
	if err != nil {
		t.Fatalf("Load() = %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.0.") {
		t.Errorf("Load(): openapi %q, want 3.0.x", doc.OpenAPI)
	}
	bearer := doc.Components.SecuritySchemes["BearerAuth"]
	if bearer == nil || bearer.Value == nil || bearer.Value.Type != "http" || bearer.Value.Scheme != "bearer" {
		t.Errorf("Load(): BearerAuth = %+v, want an HTTP bearer scheme", bearer)
	}
	if doc.Components.SecuritySchemes["AccessToken"] == nil {
		t.Errorf("Load(): no AccessToken scheme (the access_token query parameter)")
	}
	if doc.Paths.Find("/v1/watch") == nil || doc.Paths.Find("/v1/watch").Get.Responses.Status(200).Value.Content.Get("text/event-stream") == nil {
		t.Errorf("Load(): GET /v1/watch does not answer text/event-stream")
	}
	var v2 struct {
		Swagger string `json:"swagger"`
	}
	if err := json.Unmarshal([]byte(V2()), &v2); err != nil || v2.Swagger != "2.0" {
		t.Errorf("V2(): swagger %q (%v), want a 2.0 document", v2.Swagger, err)
	}
}

// generated lists the files generate.sh makes, relative to openapi/.
var generated = []string{
	"swagger.json",
	"swagger.yaml",
	"openapi3.json",
	"client/client.gen.go",
	"ts/src/schema.ts",
}

// TestGeneratedFilesAreCurrent runs generate.sh into a temporary directory
// and fails unless every committed file it makes is what it makes now: a
// handler's annotation, a wire type or a generator changed without
// `go generate ./openapi/`. The TypeScript types need `npm ci` in
// openapi/ts; without it they are not compared, unless on CI.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs swag, the converter and the client generators")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("generate.sh needs bash: %v", err)
		}
		t.Skipf("generate.sh needs bash: %v", err)
	}
	files := generated
	env := os.Environ()
	if _, err := os.Stat(filepath.Join("ts", "node_modules", ".bin", "openapi-typescript")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the TypeScript types need `npm ci` in openapi/ts: %v", err)
		}
		t.Logf("not comparing the TypeScript types: they need `npm ci` in openapi/ts (%v)", err)
		files = files[:len(files)-1]
		env = append(env, "HTTPKV_SKIP_TS=1")
	}
	out := t.TempDir()
	cmd := exec.Command("bash", "generate.sh", out)
	cmd.Env = env
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("bash generate.sh %s: %v\n%s", out, err, b)
	}
	for _, name := range files {
		want, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatalf("generate.sh made no %s: %v", name, err)
		}
		got, err := os.ReadFile(name)
		if err != nil {
			t.Errorf("openapi/%s is not committed (%v); run: go generate ./openapi/", name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("openapi/%s is stale: it differs from what generate.sh makes now (first difference at line %d); run: go generate ./openapi/",
				name, firstDiffLine(got, want))
		}
	}
}

// firstDiffLine returns the 1-based line where a and b first differ.
func firstDiffLine(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	return bytes.Count(a[:i], []byte{'\n'}) + 1
}
