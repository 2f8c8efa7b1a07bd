package docs

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/httpkv/httpkv/tests/e2e"
)

// TestTypeScriptClientPackage packs the TypeScript client as its README
// says (npm pack in openapi/ts), checks that the tarball holds the
// compiled modules, their types and the README but no sources, installs
// it into an empty project, and there compiles and runs the README's
// example against a real server.
func TestTypeScriptClientPackage(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	npm, npmErr := exec.LookPath("npm")
	tsc := filepath.Join(tsClientDir, "node_modules", ".bin", "tsc")
	if err == nil {
		err = npmErr
	}
	if err == nil {
		_, err = os.Stat(tsc)
	}
	e2e.NeedPrograms(t, "packing the TypeScript client needs node, npm and `npm ci` in openapi/ts", err)
	tsc, err = filepath.Abs(tsc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	run := func(dir, name string, args ...string) []byte {
		t.Helper()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "NO_COLOR=1", "npm_config_audit=false", "npm_config_fund=false", "npm_config_update_notifier=false")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s (in %s): %v\n%s", filepath.Base(name), strings.Join(args, " "), dir, err, out)
		}
		return out
	}

	packs := t.TempDir()
	run(tsClientDir, npm, "pack", "--pack-destination", packs, "--loglevel=error")
	tarballs, _ := filepath.Glob(filepath.Join(packs, "*.tgz"))
	if len(tarballs) != 1 {
		t.Fatalf("npm pack wrote %q, want one tarball", tarballs)
	}
	files, err := tarFiles(tarballs[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"package/package.json", "package/README.md", "package/dist/index.js", "package/dist/index.d.ts", "package/dist/schema.d.ts", "package/dist/watch.js", "package/dist/sse.js"} {
		if !slices.Contains(files, want) {
			t.Errorf("the package has no %s; it has %q", want, files)
		}
	}
	for _, f := range files {
		if strings.HasPrefix(f, "package/src/") || strings.HasPrefix(f, "package/test/") || strings.HasPrefix(f, "package/node_modules/") {
			t.Errorf("the package holds %s, which is not for its users", f)
		}
	}

	readme, err := os.ReadFile(filepath.Join(tsClientDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	example, err := onlyBlock(string(readme), "ts")
	if err != nil {
		t.Fatalf("openapi/ts/README.md: %v", err)
	}
	s := e2e.StartServer(t)
	first := s.Status(t).Revision
	project := t.TempDir()
	projectFiles := map[string]string{
		"package.json": `{"name": "consumer", "private": true, "type": "module"}`,
		"tsconfig.json": `{"compilerOptions": {"target": "ES2022", "module": "NodeNext", "moduleResolution": "NodeNext",
			"lib": ["ES2022", "DOM"], "types": [], "strict": true, "noUncheckedIndexedAccess": true, "outDir": "build"},
			"include": ["example.ts"]}`,
		"example.ts": strings.ReplaceAll(example, "http://127.0.0.1:2378", s.URL),
	}
	for name, content := range projectFiles {
		if err := os.WriteFile(filepath.Join(project, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(project, npm, "install", "--prefer-offline", "--loglevel=error", tarballs[0])
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if b, err := os.ReadFile(filepath.Join(project, "package.json")); err != nil || json.Unmarshal(b, &pkg) != nil || pkg.Dependencies["@httpkv/client"] == "" {
		t.Fatalf("npm install of the tarball did not add @httpkv/client to the project: %v %+v", err, pkg)
	}
	run(project, node, tsc, "-p", ".")
	out := string(run(project, node, filepath.Join("build", "example.js")))
	// The example's put is the store's first write: revision 2 on a
	// fresh store, one later on a gateway, whose cluster took one for its
	// deployment's marker (first).
	put := first + 1
	want := []string{fmt.Sprintf("put at revision %d", put), "postgres://db:5432", "404 key_not_found", "config/db/url = postgres://db:5432",
		fmt.Sprintf("watch: %d put config/db/url postgres://db:5432", put), "stream: watch 1 put config/db/url"}
	if got := strings.Split(strings.TrimSpace(out), "\n"); !slices.Equal(got, want) {
		t.Errorf("the README's example printed %q, want %q", got, want)
	}
}

// tarFiles returns the names of the regular files of a .tgz.
func tarFiles(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(gz)
	var names []string
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return names, nil
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag == tar.TypeReg {
			names = append(names, h.Name)
		}
	}
}

// onlyBlock returns the code of the one fenced block of a Markdown text
// whose language is lang.
func onlyBlock(text, lang string) (string, error) {
	blocks, err := readmeBlocks(text)
	if err != nil {
		return "", err
	}
	var found []readmeBlock
	for _, b := range blocks {
		if b.lang == lang {
			found = append(found, b)
		}
	}
	if len(found) != 1 {
		return "", errors.New("want exactly one " + lang + " block")
	}
	return strings.Join(found[0].lines, "\n") + "\n", nil
}
