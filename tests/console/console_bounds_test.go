package console

import (
	"github.com/httpkv/httpkv/tests/e2e"

	"fmt"
	"strings"
	"testing"
)

// aliasBomb returns a YAML "billion laughs": a list of fanout strings,
// then levels lists each of fanout aliases of the list before, so that
// a few hundred bytes expand to fanout^(levels+1) strings.
func aliasBomb(levels, fanout int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "a: &a [%s]\n", strings.TrimSuffix(strings.Repeat(`"lol",`, fanout), ","))
	for i := 1; i <= levels; i++ {
		prev, name := string(rune('a'+i-1)), string(rune('a'+i))
		fmt.Fprintf(&b, "%s: &%s [%s]\n", name, name, strings.TrimSuffix(strings.Repeat("*"+prev+",", fanout), ","))
	}
	return b.String()
}

// consoleHeapLimit bounds the page's JavaScript heap after it shows any
// one value: what the console may spend on a value is bounded by its
// own limits (web/static/console/formats.js), far below this.
const consoleHeapLimit = 256 << 20

// pageResponds checks that the page still runs script and that its heap
// is bounded: a page stuck expanding a value fails the first with the
// wait's deadline, one that expanded it fails the second.
func (p *consolePage) pageResponds(what string) {
	p.tb.Helper()
	var two int
	p.eval(`1 + 1`, &two)
	if two != 2 {
		p.tb.Fatalf("after %s the page evaluates 1 + 1 as %d", what, two)
	}
	var heap int64
	p.eval(`performance.memory.usedJSHeapSize`, &heap)
	p.tb.Logf("after %s the page's heap holds %.1f MiB", what, float64(heap)/(1<<20))
	if heap > consoleHeapLimit {
		p.tb.Errorf("after %s the page's heap holds %d MiB, more than %d MiB", what, heap>>20, consoleHeapLimit>>20)
	}
}

// TestConsoleValueBounds opens values that cost a careless page
// gigabytes or an endless loop: YAML alias bombs of a few hundred bytes,
// a YAML value that contains itself, JSON nested 100,000 deep, and JSON
// whose pretty form is larger than the page will build. Each is shown as
// its text with a note saying why, every tab answers the same way, and
// the page stays responsive with a bounded heap.
func TestConsoleValueBounds(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	wide := "[" + strings.TrimSuffix(strings.Repeat("[0],", 300000), ",") + "]"
	cases := []struct {
		key, value, note string
	}{
		{"bomb/seven", aliasBomb(7, 9), "aliases expand it to"},
		{"bomb/seven-wide", aliasBomb(7, 10), "aliases expand it to"},
		{"bomb/six", aliasBomb(6, 9), "aliases expand it to"},
		{"bomb/itself", "a: &a [1, *a]\nb: *a\n", "contains itself through an alias"},
		{"bomb/deep", deep, "nested deeper than 100 levels"},
		{"bomb/wide", wide, "pretty-printed it is"},
	}
	for _, c := range cases {
		t.Logf("%s: %d bytes", c.key, len(c.value))
		s.Put(t, c.key, c.value)
	}
	p := openConsole(t, s, "#/keys?f=bomb/", 1280, 800)
	for _, c := range cases {
		p.goTo("#/keys?f=bomb/&k=" + c.key)
		p.waitText(".key-pane h2", c.key)
		p.waitText(".key-pane .value .value-note", c.note)
		p.waitText(`[role="tab"][aria-selected="true"]`, "Text")
		p.waitText(".key-pane .value pre", c.value[:8])
		p.pageResponds("opening " + c.key)
		for _, tab := range []string{"JSON", "YAML"} {
			p.click(`.key-pane [role="tab"]`, tab)
			p.waitText(`[role="tab"][aria-selected="true"]`, tab)
			p.waitText(".key-pane .value .value-note", c.note)
			p.waitText(".key-pane .value pre", c.value[:8])
			p.pageResponds(fmt.Sprintf("the %s tab of %s", tab, c.key))
		}
		// The editor checks and pretty-prints within the same bounds.
		p.click(".key-pane button", "Edit")
		p.waitText(".editor .check", "")
		p.click(".editor button", "Pretty-print")
		p.pageResponds("pretty-printing " + c.key + " in the editor")
		p.click(".edit button", "Cancel")
		p.waitNoText(".edit button", "Cancel")
	}
}
