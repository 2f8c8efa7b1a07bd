package console

import (
	"net/http"
	"testing"
	"time"

	"github.com/httpkv/httpkv/tests/e2e"
)

// TestConsoleOneStream: the console follows everything it shows through
// one stream of many watchers, one watcher per thing it follows (a
// folder's list, a key), and no single watch; as the page moves to
// another key, its watchers change and its stream stays.
func TestConsoleOneStream(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	s.Put(t, "one/a", "1")
	s.Put(t, "one/b", "2")
	p := e2e.OpenConsole(t, s, "#/keys?f=one/&k=one/a", 1280, 800)
	p.WaitText(".key-pane .value", "1")
	p.Wait("the live indicator to say live", `document.getElementById("live").dataset.state === "live"`)
	want := func(what string, streams, watchers int) {
		t.Helper()
		deadline := time.Now().Add(e2e.BrowserTimeout)
		for {
			gotStreams := int(s.Metric(t, "httpkv_watch_streams"))
			gotWatchers := e2e.WatcherCount(t, s)
			if gotStreams == streams && gotWatchers == watchers {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d streams and %d watchers, want %d and %d", what, gotStreams, gotWatchers, streams, watchers)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	want("a folder and a key", 1, 2)
	s.Put(t, "one/a", "changed")
	p.WaitText(".key-pane .value", "changed")

	p.GoTo("#/keys?f=one/&k=one/b")
	p.WaitText(".key-pane .value", "2")
	want("the same folder and another key", 1, 2)
	s.Put(t, "one/b", "live")
	p.WaitText(".key-pane .value", "live")
	metrics := e2e.ParseMetrics(s.Do(t, "GET", "/metrics", nil).Want(t, http.StatusOK).Body)
	if n := metrics[`httpkv_http_requests_total{method="GET",route="/v1/watch",status="200"}`]; n != 0 {
		t.Fatalf("the console opened %v single watches", n)
	}
	if n := metrics[`httpkv_http_requests_total{method="GET",route="/v1/watch/streams/{stream}",status="200"}`]; n == 0 {
		t.Fatal("the console read no stream")
	}
}
