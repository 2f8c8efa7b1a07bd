package tests

import (
	"net/http"
	"testing"
)

// TestConsoleLiveRestart follows a folder and a key live across a server
// killed and restarted on the same port and data directory. Writes made
// while it was down, by another server on the same data, reach the page
// when it reconnects (the browser resumes from Last-Event-ID), without a
// reload; the indicator shows the stream's state throughout.
func TestConsoleLiveRestart(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	s.put(t, "live/k", "one")
	s.put(t, "live/gone", "to be deleted")

	p := openConsole(t, s, "#/keys?f=live/&k=live/k", 1280, 800)
	p.waitText(".key-pane .value", "one")
	p.wait("the live indicator to say live", `document.getElementById("live").dataset.state === "live"`)
	p.eval(`(window.notReloaded = true)`, nil)

	// Live while up.
	s.put(t, "live/k", "two")
	p.waitText(".key-pane .value", "two")
	p.waitText(".key-pane .notice", "Updated live")

	s.Kill()
	p.wait("the live indicator to say reconnecting", `document.getElementById("live").dataset.state === "reconnecting"`)
	p.waitText("#live", "reconnecting")

	// While the page's server is down, another one writes to its data.
	other := &server{DataDir: s.DataDir, tb: t, args: s.args, client: &http.Client{Timeout: requestTimeout}, streams: &http.Client{}}
	t.Cleanup(func() {
		if other.running() {
			other.Stop()
		}
	})
	other.start("127.0.0.1:0")
	other.put(t, "live/k", "written while down")
	other.put(t, "live/new", "created while down")
	other.do(t, "DELETE", keyPath("live/gone"), nil).want(t, http.StatusOK)
	other.Stop()

	s.Restart()
	p.waitText(".key-pane .value", "written while down")
	p.waitText(".children a.key", "new")
	p.waitNoText(".children a.key", "gone")
	p.wait("the live indicator to say live again", `document.getElementById("live").dataset.state === "live"`)

	// And live again after it.
	s.put(t, "live/after", "after the restart")
	p.waitText(".children a.key", "after")
	var same bool
	p.eval(`window.notReloaded === true`, &same)
	if !same {
		t.Errorf("the page was reloaded; it must follow the restart by itself")
	}
}
