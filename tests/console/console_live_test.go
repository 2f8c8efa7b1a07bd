package console

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/httpkv/httpkv/tests/e2e"
)

// whileDown kills s, lets write change its data through another server on
// the same data directory and another port, and starts s again on its
// port: the writes are ones s's clients cannot have seen live.
func whileDown(t *testing.T, s *e2e.Server, p *e2e.ConsolePage, write func(o *e2e.Server)) {
	t.Helper()
	s.Kill()
	p.Wait("the live indicator to say reconnecting", `document.getElementById("live").dataset.state === "reconnecting"`)
	p.WaitText("#live", "reconnecting")
	o := &e2e.Server{DataDir: s.DataDir, TB: t, Gateway: s.Gateway, Args: s.Args, Client: &http.Client{Timeout: e2e.RequestTimeout}, Streams: &http.Client{}}
	t.Cleanup(func() {
		if o.Running() {
			o.Stop()
		}
	})
	o.Start("127.0.0.1:0")
	write(o)
	o.Stop()
	s.Restart()
}

// TestConsoleLiveRestart follows a folder and a key live across a server
// killed and restarted on the same port and data directory. Writes made
// while it was down reach the page when it reconnects (the browser
// resumes from Last-Event-ID), without a reload; when the history it
// would resume from was compacted meanwhile, the page lists again. The
// indicator shows the stream's state throughout.
func TestConsoleLiveRestart(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	s.Put(t, "live/k", "one")
	s.Put(t, "live/gone", "to be deleted")

	p := e2e.OpenConsole(t, s, "#/keys?f=live/&k=live/k", 1280, 800)
	p.WaitText(".key-pane .value", "one")
	p.Wait("the live indicator to say live", `document.getElementById("live").dataset.state === "live"`)
	p.Eval(`(window.notReloaded = true)`, nil)
	// Record every state the indicator shows.
	p.Eval(`(() => {
		const live = document.getElementById("live");
		window.liveStates = [live.dataset.state];
		new MutationObserver((records) => window.liveStates.push(...records.map((r) => r.oldValue), live.dataset.state))
			.observe(live, {attributeFilter: ["data-state"], attributeOldValue: true});
		return true;
	})()`, nil)

	// Live while up.
	s.Put(t, "live/k", "two")
	p.WaitText(".key-pane .value", "two")
	p.WaitText(".key-pane .notice", "Updated live")

	whileDown(t, s, p, func(o *e2e.Server) {
		o.Put(t, "live/k", "written while down")
		o.Put(t, "live/new", "created while down")
		o.Do(t, "DELETE", e2e.KeyPath("live/gone"), nil).Want(t, http.StatusOK)
	})
	p.WaitText(".key-pane .value", "written while down")
	p.WaitText(".children a.key", "new")
	p.WaitNoText(".children a.key", "gone")
	p.Wait("the live indicator to say live again", `document.getElementById("live").dataset.state === "live"`)

	// And live again after it.
	s.Put(t, "live/after", "after the restart")
	p.WaitText(".children a.key", "after")

	// Down again, and the history compacted past where the page was.
	whileDown(t, s, p, func(o *e2e.Server) {
		o.Put(t, "live/k", "after compaction")
		rev := o.Put(t, "live/compacted", "listed again")
		o.Do(t, "POST", "/v1/compact", []byte(fmt.Sprintf(`{"revision":%d}`, rev)), "Content-Type", "application/json").Want(t, http.StatusOK)
	})
	p.WaitText(".key-pane .value", "after compaction")
	p.WaitText(".children a.key", "compacted")
	var states []string
	p.Eval(`window.liveStates`, &states)
	if !slices.Contains(states, "reloading") {
		t.Errorf("the live indicator went through %q, want \"reloading\" after the compaction", states)
	}
	p.Wait("the live indicator to say live after the compaction", `document.getElementById("live").dataset.state === "live"`)
	s.Put(t, "live/k", "live after the compaction")
	p.WaitText(".key-pane .value", "live after the compaction")

	var same bool
	p.Eval(`window.notReloaded === true`, &same)
	if !same {
		t.Errorf("the page was reloaded; it must follow the restarts by itself")
	}
}
