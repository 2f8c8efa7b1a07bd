package docs

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/httpkv/httpkv/tests/e2e"
)

// readmeLogger is put before the README's browser example: the page's
// console.log goes to the page's origin, in order, where the test reads it.
const readmeLogger = `<!doctype html>
<meta charset="utf-8">
<script>
let chain = Promise.resolve();
console.log = (...args) => {
  const body = JSON.stringify(args.map(String));
  chain = chain.then(() => fetch("/log", {method: "POST", body})).catch(() => {});
};
</script>
`

// TestREADMEBrowserWatch runs the README's browser example (its html
// block) in headless Chromium, from a page on another origin, against a
// server started with --cors-allowed-origins as the README says: the
// example logs where the watch starts, then the put the test makes.
func TestREADMEBrowserWatch(t *testing.T) {
	t.Parallel()
	s, waitLog := openREADMEPage(t, "")
	waitLog("where it watches from", func(l []string) bool { return len(l) == 2 && l[0] == "watching from" })
	rev := s.Put(t, "config/db/url", "postgres://db:5432")
	want := []string{strconv.FormatInt(rev, 10), "put", "config/db/url", "postgres://db:5432"}
	waitLog("the put", func(l []string) bool { return slices.Equal(l, want) })
}

// openREADMEPage serves the README's html block with attr after its
// language as a page on an origin of its own, opens it in headless
// Chromium against a server started with --cors-allowed-origins as the
// README says, and returns the server and a function that waits until
// the page has logged a line that match accepts.
func openREADMEPage(t *testing.T, attr string) (*e2e.Server, func(what string, match func([]string) bool)) {
	t.Helper()
	e2e.RequireChromium(t)
	text, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	example, err := htmlBlock(string(text), attr)
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}

	var mu sync.Mutex
	var logged [][]string
	var page string
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, page)
	})
	mux.HandleFunc("POST /log", func(w http.ResponseWriter, r *http.Request) {
		var args []string
		if err := json.NewDecoder(r.Body).Decode(&args); err != nil {
			t.Errorf("the page logged something that is not a list of strings: %v", err)
		}
		mu.Lock()
		logged = append(logged, args)
		mu.Unlock()
	})
	origin := httptest.NewServer(mux)
	t.Cleanup(origin.Close)

	s := e2e.StartServer(t, "--cors-allowed-origins", origin.URL)
	mu.Lock()
	page = readmeLogger + strings.ReplaceAll(example, "http://127.0.0.1:2378", s.URL)
	mu.Unlock()
	e2e.StartChromium(t, origin.URL+"/")

	return s, func(what string, match func([]string) bool) {
		t.Helper()
		deadline := time.Now().Add(e2e.BrowserTimeout)
		for {
			mu.Lock()
			found := slices.ContainsFunc(logged, match)
			got := slices.Clone(logged)
			mu.Unlock()
			if found {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the README's browser example did not log %s within %v; it logged %q", what, e2e.BrowserTimeout, got)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
