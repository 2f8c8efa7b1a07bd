package tests

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/tests/e2e"
)

// deps returns the packages pkg imports, directly or not (its tests'
// imports apart), as go list -deps reports them.
func deps(tb testing.TB, pkg string) []string {
	tb.Helper()
	// go test puts the go command of its toolchain first in PATH.
	out, err := exec.Command("go", "list", "-deps", e2e.Module+pkg).CombinedOutput()
	if err != nil {
		tb.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
	}
	return strings.Fields(string(out))
}

// TestLayers checks the direction of imports docs/design.md draws: the
// API, and the locks and elections it serves, depend on the backend
// interface and on the domain types, never on a storage package; the
// watch scheduler knows nothing of the store it is fed from; and nothing
// below the API knows HTTP.
func TestLayers(t *testing.T) {
	t.Parallel()
	storages := []string{"mvcc", "watch", "lease", "compactor", "snapshot", "backend/embedded", "backend/etcd"}
	for _, pkg := range []string{"httpapi", "httpapi/metrics", "concurrency", "answer", "sink", "stream", "stream/multi"} {
		imports := deps(t, pkg)
		for _, storage := range storages {
			if slices.Contains(imports, e2e.Module+storage) {
				t.Errorf("%s imports %s: it must reach the store through a backend interface only", pkg, storage)
			}
		}
	}
	if slices.Contains(deps(t, "watch"), e2e.Module+"mvcc") {
		t.Error("watch imports mvcc: the scheduler must take published revisions and a History, whatever the source")
	}
	// The gateway to etcd knows nothing of the embedded store. (Through
	// gRPC it imports net/http, which it does not use.)
	for _, embeddedOnly := range []string{"mvcc", "lease", "backend/embedded"} {
		if slices.Contains(deps(t, "backend/etcd"), e2e.Module+embeddedOnly) {
			t.Errorf("backend/etcd imports %s: the gateway keeps nothing of the embedded store", embeddedOnly)
		}
	}
	// The backends stand behind the API's interface, which they do not
	// import.
	for _, b := range []string{"backend/embedded", "backend/etcd"} {
		if slices.Contains(deps(t, b), e2e.Module+"httpapi") {
			t.Errorf("%s imports httpapi: a backend knows nothing of the API it serves", b)
		}
	}
	// The load tool is a binary of its own: the server's carries none of
	// it (its clients of etcd, its null server).
	for _, server := range []string{"cmd/httpkv", "internal/daemon"} {
		if slices.Contains(deps(t, server), e2e.Module+"bench") {
			t.Errorf("%s imports bench: the load tool is cmd/httpkv-bench, which `httpkv bench` runs", server)
		}
	}
	// The wire is the API's documents, not how they travel: it knows
	// no HTTP, no store, and not the API that serves it.
	wire := deps(t, "wire")
	for _, banned := range append([]string{"httpapi"}, storages...) {
		if slices.Contains(wire, e2e.Module+banned) {
			t.Errorf("wire imports %s: the documents know neither the API that serves them nor a store", banned)
		}
	}
	// The stream engine is transport-free: it knows neither HTTP nor the
	// API it serves, and reaches the store through interfaces it declares.
	for _, engine := range []string{"stream", "stream/multi"} {
		if imports := deps(t, engine); slices.Contains(imports, "net/http") || slices.Contains(imports, e2e.Module+"httpapi") || slices.Contains(imports, e2e.Module+"sink") {
			t.Errorf("%s imports net/http, httpapi or sink: the stream engine knows no transport; sink and httpapi drive it", engine)
		}
	}
	for _, below := range []string{"kv", "keyrange", "concurrency", "reconcile", "patch", "wire", "mvcc", "watch", "lease", "auth", "compactor", "snapshot", "backend/embedded"} {
		if slices.Contains(deps(t, below), "net/http") {
			t.Errorf("%s imports net/http: only httpapi (and the command) may know HTTP", below)
		}
	}
}

// apiWords are the API's words for people: a route (/v1/...) or a
// flag of the command (--max-leases).
var apiWords = regexp.MustCompile(`/v1/|(^|[\s(])--[a-z]`)

// TestDomainMessages: the packages below the API say what failed in
// their own terms; the routes and flags that help are added where the
// API answers (httpapi/error_hints.go) or the command reports. No string
// of theirs names one. A gateway may name etcd's own flags, which are
// etcd's terms, but not httpkv's: in backend/etcd a flag is checked
// against the command's (httpkvFlags) but those etcd has too.
func TestDomainMessages(t *testing.T) {
	t.Parallel()
	check := func(dir string, words *regexp.Regexp) {
		fset := token.NewFileSet()
		files, err := filepath.Glob(filepath.Join("..", dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				if s, err := strconv.Unquote(lit.Value); err == nil && words.MatchString(s) {
					t.Errorf("%s: %q names a route or a flag: give it as the API's hint (httpapi/error_hints.go) or the command's", fset.Position(lit.Pos()), s)
				}
				return true
			})
		}
	}
	for _, dir := range []string{"kv", "keyrange", "mvcc", "watch", "lease", "auth", "compactor", "snapshot", "concurrency", "patch", "reconcile", "wire", "stream", "stream/multi", "backend/embedded"} {
		check(dir, apiWords)
	}
	var ours []string
	for name := range httpkvFlags(t) {
		if !etcdFlags[name] {
			ours = append(ours, regexp.QuoteMeta(name))
		}
	}
	check("backend/etcd", regexp.MustCompile(`/v1/|(^|[\s("])--(`+strings.Join(ours, "|")+`)([^a-z0-9-]|$)`))
}

// etcdFlags are the flags etcd has under the same names as httpkv's: a
// gateway's message may name them as etcd's ("etcd's --max-request-bytes").
var etcdFlags = map[string]bool{
	"max-request-bytes": true, "max-txn-ops": true, "quota-backend-bytes": true,
	"auto-compaction-mode": true, "auto-compaction-retention": true,
	"data-dir": true, "log-level": true,
}

// httpkvFlags returns the names of the command's flags, read from where
// cmd/httpkv (and its client commands) declares them: fs.StringVar(&v, "name", ...), fs.Int("name",
// ...) and the like.
func httpkvFlags(tb testing.TB) map[string]bool {
	tb.Helper()
	declare := map[string]bool{"Bool": true, "BoolVar": true, "BoolFunc": true, "Duration": true, "DurationVar": true,
		"Float64": true, "Float64Var": true, "Func": true, "Int": true, "IntVar": true, "Int64": true, "Int64Var": true,
		"String": true, "StringVar": true, "TextVar": true, "Uint": true, "UintVar": true, "Uint64": true, "Uint64Var": true, "Var": true}
	var files []string
	err := filepath.WalkDir(filepath.Join("..", "cmd", "httpkv"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	flags := map[string]bool{}
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			tb.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); !ok || !declare[sel.Sel.Name] {
				return true
			}
			for _, arg := range call.Args {
				if lit, ok := arg.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if s, err := strconv.Unquote(lit.Value); err == nil {
						flags[s] = true
					}
					break
				}
			}
			return true
		})
	}
	// The test is only as good as what it found.
	for _, want := range []string{"etcd-namespace", "etcd-request-timeout", "etcd-max-history-watches", "max-leases"} {
		if !flags[want] {
			tb.Fatalf("httpkvFlags found no --%s in cmd/httpkv: it no longer reads the flags as they are declared", want)
		}
	}
	return flags
}
