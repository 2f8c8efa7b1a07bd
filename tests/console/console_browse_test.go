package console

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/httpkv/httpkv/tests/e2e"
)

// TestConsoleBrowse browses 100,000 keys: the top level shows the folders
// with their counts without reading the keys below them, a folder of
// 100,000 keys pages a hundred at a time, Find lists the keys with a
// prefix, and Up and Down move through the list.
func TestConsoleBrowse(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t, "--max-txn-ops=1000")
	e2e.SeedKeys(t, s, 100000, "big/%05d")
	s.Put(t, "app/config", `{"replicas": 2}`)
	s.Put(t, "app/db/url", "postgres://db")
	s.Put(t, "top", "a key at the top level")

	p := e2e.OpenConsole(t, s, "#/keys", 1280, 800)
	// The top level: two folders and a key, from a couple of small reads.
	p.WaitText(".children a.folder", "big/")
	p.WaitText(".children a.folder", "app/")
	p.WaitText(".children a.key", "top")
	if n := p.Count(".children li"); n != 3 {
		t.Errorf("the top level shows %d items, want 3 (app/, big/, top):\n%s", n, p.Shows())
	}
	// The counts come lazily, for the folders in view.
	p.WaitText(`.children li[data-key="big/"] .count`, "100,000")
	p.WaitText(`.children li[data-key="app/"] .count`, "2")
	p.WaitText(".summary", "100,003 keys below")
	var listed int
	p.Eval(`performance.getEntriesByType("resource").filter((e) => e.name.includes("/v1/kv?") && !e.name.includes("count_only")).reduce((n, e) => n + e.encodedBodySize, 0)`, &listed)
	// All 100,000 keys, keys only, would be about 8 MB.
	t.Logf("listing the top level over 100,003 keys read %d bytes of keys", listed)
	if listed > 64<<10 {
		t.Errorf("listing the top level read %d bytes of keys, want a few reads past each folder (under 64 KiB)", listed)
	}

	// A folder of 100,000 keys, a hundred at a time.
	p.Click(".children a.folder", "big/")
	p.WaitText(".crumbs", "big/")
	p.WaitText(".children a.key", "00099")
	if n := p.Count(".children li"); n != 100 {
		t.Errorf("big/ shows %d keys at first, want 100", n)
	}
	p.WaitText(".summary", "100 items shown so far · 100,000 keys below")
	p.Click("button.more", "Load more")
	p.WaitText(".children a.key", "00199")
	p.Click("button.more", "Load more")
	p.WaitText(".children a.key", "00299")
	if n := p.Count(".children li"); n != 300 {
		t.Errorf("big/ shows %d keys after loading twice more, want 300", n)
	}

	// Up and Down move through the list, as in a list box.
	p.Eval(`document.querySelector(".children a").focus()`, nil)
	p.Do(chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.ArrowDown))
	var focused string
	p.Eval(`document.activeElement.textContent`, &focused)
	if !strings.Contains(focused, "00002") {
		t.Errorf("after Down twice from the first key, focus is on %q, want big/00002", focused)
	}

	// Find: the keys starting with a prefix, across the whole folder.
	p.MarkLabels()
	p.FillLabelled("Find", "big/9999")
	p.Click("form.find button", "Find")
	p.WaitText("#browse-heading", "Keys starting with big/9999")
	p.WaitText(".children a.key", "big/99999")
	p.WaitText(".summary", "10 keys shown · 10 keys below")

	// Opening a key from the list shows it in the pane.
	p.Click(".children a.key", "big/99995")
	p.WaitText(".key-pane h2", "big/99995")
	p.WaitText(".key-pane .value", "v99995")
}
