package console

import (
	"fmt"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/tests/e2e"
)

// TestConsoleCompareJSON compares revisions of a compact JSON value in a
// key's history. One field changed shows as that one path, with the old
// and new value, and the pretty-printed values below differ in one line
// each; the same object with its keys reordered shows no difference; a
// value that is not JSON is compared line by line.
func TestConsoleCompareJSON(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	v1 := s.Put(t, "cfg/app", `{"name":"web","replicas":2,"env":{"LOG":"info","PORT":"80"},"tags":["a","b"]}`)
	v2 := s.Put(t, "cfg/app", `{"name":"web","replicas":2,"env":{"LOG":"debug","PORT":"80"},"tags":["a","b"]}`)
	v3 := s.Put(t, "cfg/app", `{"tags":["a","b"],"env":{"PORT":"80","LOG":"debug"},"replicas":2,"name":"web"}`)
	v4 := s.Put(t, "cfg/app", "replicas: 3")

	p := e2e.OpenConsole(t, s, "#/keys?f=cfg/&k=cfg/app&pane=history", 1280, 800)
	p.Click(fmt.Sprintf(`.history tr[data-revision="%d"] input`, v1), "")
	p.Click(fmt.Sprintf(`.history tr[data-revision="%d"] input`, v2), "")
	p.Click(".history button", "Compare selected")
	p.WaitText(".diff-area caption", fmt.Sprintf("revision %d → revision %d: 1 path changed", v1, v2))
	var paths []string
	p.Eval(`[...document.querySelectorAll(".diff-area .changed-paths li")].map((li) => li.textContent)`, &paths)
	if want := `/env/LOG "info" → "debug"`; len(paths) != 1 || paths[0] != want {
		t.Errorf("the compare lists the paths %q, want [%q]", paths, want)
	}
	if c := p.Text(".diff-area caption"); strings.Contains(c, "lines differ") {
		t.Errorf("the compare of two JSON values says %q, want it compared field by field", c)
	}
	p.WaitText(".diff-area tr.del", `"LOG": "info",`)
	p.WaitText(".diff-area tr.ins", `"LOG": "debug",`)
	if n, m := p.Count(".diff-area tr.del"), p.Count(".diff-area tr.ins"); n != 1 || m != 1 {
		t.Errorf("the pretty-printed values differ in %d removed and %d added lines, want 1 and 1:\n%s", n, m, p.Shows())
	}

	// What a change did: the reordering changed nothing.
	p.Click(fmt.Sprintf(`.history tr[data-revision="%d"] button`, v3), "Changes")
	p.WaitText(".diff-area caption", fmt.Sprintf("revision %d → revision %d: no difference", v2, v3))
	if n := p.Count(".diff-area .changed-paths li"); n != 0 {
		t.Errorf("the reordered object lists %d changed paths, want none", n)
	}

	// JSON to YAML is text to text.
	p.Click(fmt.Sprintf(`.history tr[data-revision="%d"] button`, v4), "Changes")
	p.WaitText(".diff-area caption", fmt.Sprintf("revision %d → revision %d: 2 lines differ", v3, v4))
	p.WaitText(".diff-area tr.ins", "replicas: 3")
}

// TestConsoleHistoryBounded reads a key's history longer than the page
// keeps. Loading older changes past the bound drops the newest rows and
// stops following live, until "Show the newest"; live changes past it
// drop the oldest rows, and "Load older" reads them again without a gap.
func TestConsoleHistoryBounded(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	const rows = 500 // history.js MAX_ROWS
	// The revisions of h/k's puts: over etcd, the console's stream takes
	// revisions of the cluster between them (its record), so back(n), the
	// put n before the last, is counted in puts, not in revisions.
	var puts []int64
	back := func(n int) int64 { return puts[len(puts)-1-n] }
	for i := 0; i < rows+100; i++ {
		puts = append(puts, s.Put(t, "h/k", fmt.Sprint(i)))
	}
	last := back(0)
	p := e2e.OpenConsole(t, s, "#/keys?f=h/&k=h/k&pane=history", 1280, 800)
	p.WaitText(fmt.Sprintf(`.history tr[data-revision="%d"]`, last), "")
	// Every "Load older" adds 50 rows.
	for i := 1; i <= rows/50+1; i++ {
		p.Click(".history button.more", "Load older")
		p.Wait(fmt.Sprintf("%d rows", min(50*(i+1), rows)), fmt.Sprintf(`document.querySelectorAll(".history tbody tr").length === %d && !document.querySelector(".history button.more").disabled`, min(50*(i+1), rows)))
	}
	p.WaitText(".history .banner", "the newest are not followed live")
	revs := historyRevisions(p)
	if revs[0] != back(100) || revs[len(revs)-1] != back(100+rows-1) {
		t.Errorf("after loading %d rows the history shows revisions %d to %d, want the %d before the newest 100: %d to %d",
			rows+100, revs[0], revs[len(revs)-1], rows, back(100), back(100+rows-1))
	}
	checkContiguous(t, revs)
	p.Click(".history .banner button", "Show the newest")
	p.WaitText(fmt.Sprintf(`.history tr[data-revision="%d"]`, last), "")
	p.WaitNoText(".history .banner", "the newest are not followed live")
	if n := p.Count(".history tbody tr"); n != 50 {
		t.Errorf("after showing the newest the history has %d rows, want 50", n)
	}

	// Fill the list to its bound, then write past it live.
	for i := 1; i < rows/50; i++ {
		p.Click(".history button.more", "Load older")
		p.Wait(fmt.Sprintf("%d rows", 50*(i+1)), fmt.Sprintf(`document.querySelectorAll(".history tbody tr").length === %d && !document.querySelector(".history button.more").disabled`, 50*(i+1)))
	}
	oldest := historyRevisions(p)[rows-1]
	for i := 0; i < 30; i++ {
		puts = append(puts, s.Put(t, "h/k", fmt.Sprint("live ", i)))
	}
	last = back(0)
	p.WaitText(fmt.Sprintf(`.history tr[data-revision="%d"]`, last), "")
	if n := p.Count(".history tbody tr"); n != rows {
		t.Errorf("after 30 live changes on a full list the history has %d rows, want %d", n, rows)
	}
	// The 30 oldest rows were dropped: "Load older" reads 50 from the
	// newest of them on, and the list, full again, drops its newest 50.
	p.Click(".history button.more", "Load older")
	p.Wait("the rows dropped, read again", fmt.Sprintf(`document.querySelector('.history tr[data-revision="%d"]')`, back(rows+49)))
	p.WaitText(".history .banner", "the newest are not followed live")
	revs = historyRevisions(p)
	checkContiguous(t, revs)
	if revs[0] != back(50) || revs[len(revs)-1] != back(rows+49) || oldest != back(rows+29) {
		t.Errorf("after 30 live changes and loading older the history shows revisions %d to %d (the oldest before was %d), want %d to %d (and %d)",
			revs[0], revs[len(revs)-1], oldest, back(50), back(rows+49), back(rows+29))
	}
}

// historyRevisions returns the revisions the history view lists, in order.
func historyRevisions(p *e2e.ConsolePage) []int64 {
	p.Tb.Helper()
	var revs []int64
	p.Eval(`[...document.querySelectorAll(".history tbody tr")].map((r) => Number(r.dataset.revision))`, &revs)
	if len(revs) == 0 {
		p.Tb.Fatalf("the history lists no revisions:\n%s", p.Shows())
	}
	return revs
}

// checkContiguous checks that revs count down by one: one key written
// once a revision, shown without a gap or a repeat.
func checkContiguous(t *testing.T, revs []int64) {
	t.Helper()
	for i := 1; i < len(revs); i++ {
		if revs[i] != revs[i-1]-1 {
			t.Errorf("the history lists revision %d after %d (row %d), want %d", revs[i], revs[i-1], i, revs[i-1]-1)
			return
		}
	}
}
