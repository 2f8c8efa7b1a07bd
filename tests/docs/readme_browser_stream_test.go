package docs

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// htmlBlock returns the README's html block whose info string carries
// attr after the language ("" for the one with none).
func htmlBlock(text, attr string) (string, error) {
	blocks, err := readmeBlocks(text)
	if err != nil {
		return "", err
	}
	var found []string
	for _, b := range blocks {
		if b.lang == "html" && strings.Join(b.attrs, " ") == attr {
			found = append(found, strings.Join(b.lines, "\n")+"\n")
		}
	}
	if len(found) != 1 {
		return "", fmt.Errorf("want exactly one html block with %q after the language, found %d", attr, len(found))
	}
	return found[0], nil
}

// TestREADMEBrowserWatchStream runs the README's browser example of a
// stream of many watchers (its "html stream" block) in headless Chromium,
// from a page on another origin: it creates a stream with one watch, reads
// it with EventSource, adds a second watch, and logs what each watcher
// receives of the puts the test makes.
func TestREADMEBrowserWatchStream(t *testing.T) {
	t.Parallel()
	s, waitLog := openREADMEPage(t, "stream")
	logs := func(want ...string) {
		t.Helper()
		waitLog(fmt.Sprint(want), func(l []string) bool { return slices.Equal(l, want) })
	}
	logs("watching", "1")
	logs("watching", "2")
	s.Put(t, "config/db/url", "postgres://db:5432")
	s.Put(t, "jobs/1", "build")
	logs("1", "put", "config/db/url", "postgres://db:5432")
	logs("2", "put", "jobs/1", "build")
}
