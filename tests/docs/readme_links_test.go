package docs

import (
	"cmp"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// markdownLink matches a Markdown link or image and captures its target.
var markdownLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// TestREADMELinks: every link and image of the README that points into
// the repository (the console's screenshots, DEVELOPERS.md, docs/...)
// names a file that exists, and every #anchor a heading of its page.
func TestREADMELinks(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	text, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	prose := withoutCodeBlocks(string(text))
	links := markdownLink.FindAllStringSubmatch(prose, -1)
	if len(links) == 0 {
		t.Fatal("README.md: no link found; is the pattern wrong?")
	}
	for _, m := range links {
		target := m[1]
		if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		file, anchor, _ := strings.Cut(target, "#")
		page := prose
		if file != "" {
			b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
			if err != nil {
				t.Errorf("README.md links to %s, which is not there: %v", target, err)
				continue
			}
			page = string(b)
		}
		markdown := file == "" || strings.HasSuffix(file, ".md")
		if anchor != "" && markdown && !hasHeading(page, anchor) {
			t.Errorf("README.md links to %s, but %s has no heading whose anchor is #%s", target, cmp.Or(file, "README.md"), anchor)
		}
	}
}

// withoutCodeBlocks returns a Markdown text without its fenced blocks.
func withoutCodeBlocks(text string) string {
	var b strings.Builder
	in := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			in = !in
			continue
		}
		if !in {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// hasHeading reports whether a Markdown page has a heading whose GitHub
// anchor is anchor: lower case, spaces as hyphens, other punctuation
// dropped.
func hasHeading(page, anchor string) bool {
	for _, line := range strings.Split(withoutCodeBlocks(page), "\n") {
		title, ok := strings.CutPrefix(line, "#")
		if !ok {
			continue
		}
		title = strings.TrimSpace(strings.TrimLeft(title, "#"))
		var slug strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				slug.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				slug.WriteRune(r)
			}
		}
		if slug.String() == anchor {
			return true
		}
	}
	return false
}

// TestREADMECodeIsTested: the README's Go and TypeScript snippets are
// taken from code that runs: each line of a go block is a line of the Go
// clients' examples (openapi/client/example_test.go and
// client/example_test.go, whose server URL is httpkvURL), and each line of a ts block a line of the example in the
// TypeScript client's README, which TestTypeScriptClientPackage runs.
func TestREADMECodeIsTested(t *testing.T) {
	t.Parallel()
	text, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := readmeBlocks(string(text))
	if err != nil {
		t.Fatal(err)
	}
	goExample, err := os.ReadFile(filepath.Join("..", "..", "openapi", "client", "example_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	ourExample, err := os.ReadFile(filepath.Join("..", "..", "client", "example_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	tsReadme, err := os.ReadFile(filepath.Join("..", "..", "openapi", "ts", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	tsExample, err := onlyBlock(string(tsReadme), "ts")
	if err != nil {
		t.Fatalf("openapi/ts/README.md: %v", err)
	}
	sources := map[string]struct {
		name, text, url string
	}{
		"go": {"openapi/client/example_test.go or client/example_test.go", string(goExample) + string(ourExample), "httpkvURL"},
		"ts": {"the example of openapi/ts/README.md", tsExample, `"http://127.0.0.1:2378"`},
	}
	checked := 0
	for _, b := range blocks {
		src, ok := sources[b.lang]
		if !ok {
			continue
		}
		have := map[string]bool{}
		for _, l := range strings.Split(src.text, "\n") {
			have[strings.TrimSpace(l)] = true
		}
		for i, l := range b.lines {
			l = strings.TrimSpace(strings.ReplaceAll(l, `"http://127.0.0.1:2378"`, src.url))
			if l != "" && !have[l] {
				t.Errorf("README.md:%d: %q is not a line of %s, where it would run", b.first+i, l, src.name)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Errorf("README.md has no go or ts block; is the test out of date?")
	}
}
