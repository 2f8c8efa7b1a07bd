package console

import (
	"fmt"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/tests/e2e"
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
	p := e2e.OpenConsole(t, s, "#/keys?f=bomb/", 1280, 800)
	for _, c := range cases {
		p.GoTo("#/keys?f=bomb/&k=" + c.key)
		p.WaitText(".key-pane h2", c.key)
		p.WaitText(".key-pane .value .value-note", c.note)
		p.WaitText(`[role="tab"][aria-selected="true"]`, "Text")
		p.WaitText(".key-pane .value pre", c.value[:8])
		p.PageResponds("opening " + c.key)
		for _, tab := range []string{"JSON", "YAML"} {
			p.Click(`.key-pane [role="tab"]`, tab)
			p.WaitText(`[role="tab"][aria-selected="true"]`, tab)
			p.WaitText(".key-pane .value .value-note", c.note)
			p.WaitText(".key-pane .value pre", c.value[:8])
			p.PageResponds(fmt.Sprintf("the %s tab of %s", tab, c.key))
		}
		// The editor checks and pretty-prints within the same bounds.
		p.Click(".key-pane button", "Edit")
		p.WaitText(".editor .check", "")
		p.Click(".editor button", "Pretty-print")
		p.PageResponds("pretty-printing " + c.key + " in the editor")
		p.Click(".edit button", "Cancel")
		p.WaitNoText(".edit button", "Cancel")
	}
}
