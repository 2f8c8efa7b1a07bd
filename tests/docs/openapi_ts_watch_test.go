package docs

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/httpkv/httpkv/tests/e2e"
)

// The TypeScript watch helpers (openapi/ts/src/watch.ts) under node,
// against the real binary: openapi/ts/test/watch-driver.ts prints what
// they deliver while this test writes, kills (kill -9) and restarts the
// server mid-stream.

// startWatchDriver runs the driver in mode against the server at url.
func startWatchDriver(t *testing.T, url, mode string) *e2e.CLIProc {
	t.Helper()
	node := buildTSClient(t)
	cmd := exec.Command(node, filepath.Join("build", "test", "watch-driver.js"), mode)
	cmd.Dir = tsClientDir
	cmd.Env = append(os.Environ(), "HTTPKV_URL="+url, "NO_COLOR=1")
	return e2e.StartLines(t, cmd, true)
}

// endDriver closes the driver's stdin, which aborts its watch, and
// checks that it ends cleanly.
func endDriver(t *testing.T, p *e2e.CLIProc) {
	t.Helper()
	p.Stdin.Close()
	for _, line := range p.Rest() {
		if line != "retry" && line != "end" {
			t.Errorf("the driver printed %q after the history", line)
		}
	}
	if st := p.Wait(); st != 0 {
		t.Errorf("the driver exited %d; stderr:\n%s", st, p.Stderr)
	}
}

// TestTypeScriptWatchAcrossKill: watch(), from revision 1, of a history
// the server is killed in the middle of sending, then restarted and
// written to again, delivers every event once, in order.
func TestTypeScriptWatchAcrossKill(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	c := e2e.NewKVClient(t, s)
	want := e2e.PutEvents(t, c, "w/", 0, 300)
	p := startWatchDriver(t, s.URL, "watch")
	if line := p.Next(); line != "created" {
		t.Fatalf("the watch yielded %q first, want created", line)
	}
	var got []string
	retries := 0
	for len(got) < len(want) {
		line := p.Next()
		if line == "retry" {
			retries++
			continue
		}
		got = append(got, line)
		if len(got) == 20 {
			s.Kill()
			s.Restart()
			want = append(want, e2e.PutEvents(t, c, "w/", 300, 50)...)
		}
	}
	e2e.SameHistory(t, "watch(w/) across kill -9", got, want)
	if retries == 0 {
		t.Errorf("the watch never reconnected")
	}
	endDriver(t, p)
}

// TestTypeScriptWatchStreamAcrossKill: a WatchStream of two watchers,
// the server killed mid-stream and restarted, which forgets the stream:
// the helper makes it again, each watcher from where it was, and a watch
// added after the restart joins it; every watcher delivers its history
// once, in order.
func TestTypeScriptWatchStreamAcrossKill(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	c := e2e.NewKVClient(t, s)
	wantA := e2e.PutEvents(t, c, "a/", 0, 200)
	p := startWatchDriver(t, s.URL, "stream")
	if line := p.Next(); line != "ids 1 2" {
		t.Fatalf("the driver printed %q, want ids 1 2", line)
	}
	want := map[string][]string{"1": wantA}
	got := map[string][]string{}
	created := map[string]int{}
	added := ""
	complete := func() bool {
		if added == "" {
			return false
		}
		for id, w := range want {
			if len(got[id]) < len(w) {
				return false
			}
		}
		return true
	}
	killed := false
	for !complete() {
		line := p.Next()
		f := strings.SplitN(line, " ", 2)
		switch {
		case line == "retry":
		case f[0] == "added":
			added = f[1]
			want[added] = e2e.PutEvents(t, c, "c/", 0, 5)
		case len(f) == 2 && f[1] == "created":
			if created[f[0]]++; f[0] == "2" && created["2"] == 1 {
				want["2"] = e2e.PutEvents(t, c, "b/", 0, 10)
			}
		case len(f) != 2:
			t.Fatalf("the driver printed %q", line)
		default:
			got[f[0]] = append(got[f[0]], f[1])
		}
		// Killed once watch 1 is 20 events into its history and watch 2's
		// first events are written, whichever of the two the driver
		// reports first: watch 2's "created" may come after watch 1's
		// twentieth event, and its first events must come before the
		// kill's.
		if !killed && len(got["1"]) >= 20 && created["2"] > 0 {
			killed = true
			s.Kill()
			s.Restart()
			want["1"] = append(want["1"], e2e.PutEvents(t, c, "a/", 200, 20)...)
			want["2"] = append(want["2"], e2e.PutEvents(t, c, "b/", 10, 10)...)
			fmt.Fprintln(p.Stdin, "add c/")
		}
	}
	for id, w := range want {
		e2e.SameHistory(t, "watch "+id, got[id], w)
	}
	for id, n := range created {
		if n != 1 {
			t.Errorf("watch %s: %d created messages, want 1", id, n)
		}
	}
	endDriver(t, p)
}

// tsWatchPage runs the TypeScript watch helper in a browser: the compiled
// module (openapi/ts/build/src/watch.js) watches w/ from revision 1 and
// posts every event it yields, in order, to the page's origin.
const tsWatchPage = `<!doctype html>
<meta charset="utf-8">
<script type="module">
import { watch } from "/ts/watch.js";
let chain = Promise.resolve();
const report = (line) => { chain = chain.then(() => fetch("/log", { method: "POST", body: line })).catch(() => {}); };
try {
  for await (const m of watch("HTTPKV_URL", { key: "w/", prefix: true, start_revision: 1 }, { onRetry: () => report("retry") })) {
    if (m.type === "events") for (const ev of m.events) report(ev.kv.mod_revision + " " + ev.type + " " + ev.kv.key);
  }
} catch (e) {
  report("error " + e);
}
</script>
`

// TestTypeScriptWatchInBrowser: the TypeScript watch helper in headless
// Chromium, from a page on another origin, over fetch alone, delivers
// every event once, in order, across a kill -9 and a restart of the
// server mid-stream.
func TestTypeScriptWatchInBrowser(t *testing.T) {
	t.Parallel()
	e2e.RequireChromium(t)
	buildTSClient(t)
	var mu sync.Mutex
	var logged []string
	mux := http.NewServeMux()
	page := ""
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, page)
	})
	mux.Handle("GET /ts/", http.StripPrefix("/ts/", http.FileServer(http.Dir(filepath.Join(tsClientDir, "build", "src")))))
	mux.HandleFunc("POST /log", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		logged = append(logged, string(b))
		mu.Unlock()
	})
	origin := httptest.NewServer(mux)
	t.Cleanup(origin.Close)

	s := e2e.StartServer(t, "--cors-allowed-origins", origin.URL)
	c := e2e.NewKVClient(t, s)
	want := e2e.PutEvents(t, c, "w/", 0, 300)
	mu.Lock()
	page = strings.ReplaceAll(tsWatchPage, "HTTPKV_URL", s.URL)
	mu.Unlock()
	e2e.StartChromium(t, origin.URL+"/")

	// events waits until the page has logged n events, and returns them.
	events := func(n int) []string {
		t.Helper()
		deadline := time.Now().Add(2 * e2e.BrowserTimeout)
		for {
			mu.Lock()
			var evs []string
			for _, l := range logged {
				if strings.HasPrefix(l, "error ") {
					mu.Unlock()
					t.Fatalf("the watch in the browser failed: %s", l)
				}
				if l != "retry" {
					evs = append(evs, l)
				}
			}
			mu.Unlock()
			if len(evs) >= n {
				return evs
			}
			if time.Now().After(deadline) {
				t.Fatalf("the page logged %d events within %v, want %d", len(evs), 2*e2e.BrowserTimeout, n)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	events(20)
	s.Kill()
	s.Restart()
	want = append(want, e2e.PutEvents(t, c, "w/", 300, 50)...)
	e2e.SameHistory(t, "watch(w/) in a browser across kill -9", events(len(want)), want)
	mu.Lock()
	retried := slices.Contains(logged, "retry")
	mu.Unlock()
	if !retried {
		t.Errorf("the watch in the browser never reconnected")
	}
}
