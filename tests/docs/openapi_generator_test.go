package docs

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/httpkv/httpkv/tests/e2e"
)

// checkDir holds the third-party tools that check the OpenAPI document
// (openapi/check: @hey-api/openapi-ts and @redocly/cli, pinned in its
// package-lock.json), and the test of the client the generator makes.
var checkDir = filepath.Join("..", "..", "openapi", "check")

// requireCheckTools returns node and the absolute path of openapi/check,
// once its tools are installed (npm ci there).
func requireCheckTools(t *testing.T, tools ...string) (node, dir string) {
	t.Helper()
	node, err := exec.LookPath("node")
	for _, tool := range tools {
		if err == nil {
			_, err = os.Stat(filepath.Join(checkDir, "node_modules", ".bin", tool))
		}
	}
	e2e.NeedPrograms(t, "checking the OpenAPI document needs node and `npm ci` in openapi/check", err)
	dir, err = filepath.Abs(checkDir)
	if err != nil {
		t.Fatal(err)
	}
	return node, dir
}

// TestOpenAPILint lints the document with @redocly/cli's recommended
// rules (openapi/check/redocly.yaml): no error is allowed.
func TestOpenAPILint(t *testing.T) {
	t.Parallel()
	node, dir := requireCheckTools(t, "redocly")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("node_modules", ".bin", "redocly"),
		"lint", "--config", "redocly.yaml", "--format", "stylish", filepath.Join("..", "openapi3.json"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("redocly lint openapi/openapi3.json: %v\n%s", err, out)
	}
	t.Logf("redocly lint openapi/openapi3.json:\n%s", out)
}

// TestHeyAPIClient generates a TypeScript client of the document with
// @hey-api/openapi-ts, a generator the project does not otherwise use,
// into a temporary directory, compiles it with openapi/check/e2e.test.ts
// and runs that under node against a real server, through a proxy that
// checks every answer against the document: put, get, list, txn, leases,
// and a watch whose typed messages the generated streaming client reads.
func TestHeyAPIClient(t *testing.T) {
	t.Parallel()
	node, dir := requireCheckTools(t, "openapi-ts", "tsc")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	work := t.TempDir()
	doc, err := filepath.Abs(filepath.Join("..", "..", "openapi", "openapi3.json"))
	if err != nil {
		t.Fatal(err)
	}
	run := func(name string, args ...string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join(dir, "node_modules", ".bin", name)}, args...)...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "NO_COLOR=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
	}
	run("openapi-ts", "--input", doc, "--output", filepath.Join(work, "client"))

	test, err := os.ReadFile(filepath.Join(dir, "e2e.test.ts"))
	if err != nil {
		t.Fatal(err)
	}
	// The generated modules import each other without extensions, as a
	// bundler resolves them: compiled to CommonJS, node does too.
	tsconfig, err := json.Marshal(map[string]any{
		"compilerOptions": map[string]any{
			"target": "ES2022", "module": "CommonJS", "moduleResolution": "node", "lib": []string{"ES2022", "DOM"},
			"strict": true, "noUncheckedIndexedAccess": true, "skipLibCheck": true, "esModuleInterop": true,
			"types": []string{"node"}, "typeRoots": []string{filepath.Join(dir, "node_modules", "@types")},
			"outDir": "build", "rootDir": ".",
		},
		"include": []string{"e2e.test.ts", "client/**/*.ts"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string][]byte{"e2e.test.ts": test, "tsconfig.json": tsconfig} {
		if err := os.WriteFile(filepath.Join(work, name), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run("tsc", "-p", ".")

	front := checkingProxy(t, e2e.StartServer(t), "the generated client")
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", filepath.Join("build", "e2e.test.js"))
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "HTTPKV_URL="+front.URL, "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test e2e.test.js (openapi/check, with a client by @hey-api/openapi-ts): %v\n%s", err, out)
	}
	t.Logf("node --test e2e.test.js:\n%s", out)
}

// checkingProxy returns a proxy to s that checks every answer a client
// (named who) receives against the OpenAPI document: a stream's status
// and headers, since it does not end by itself, and any other answer
// whole.
func checkingProxy(t *testing.T, s *e2e.Server, who string) *httptest.Server {
	t.Helper()
	target, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1 // a stream's messages as they come
	proxy.ModifyResponse = func(resp *http.Response) error {
		var err error
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			err = e2e.MatchDocument(&e2e.Reply{Req: resp.Request.Method + " " + resp.Request.URL.RequestURI(),
				Status: resp.StatusCode, Header: resp.Header}, true)
		} else {
			err = checkAnswer(t, resp.Request, resp)
		}
		if err != nil {
			t.Errorf("an answer %s received: %v", who, err)
		}
		return nil
	}
	front := httptest.NewServer(proxy)
	t.Cleanup(front.Close)
	return front
}
