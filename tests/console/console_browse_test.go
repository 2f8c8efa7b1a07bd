package console

import (
	"github.com/httpkv/httpkv/tests/e2e"

	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// seedKeys writes n keys named fmt.Sprintf(format, i) with small values, a
// thousand to a txn, from a few writers at once.
func seedKeys(tb testing.TB, s *e2e.Server, n int, format string) {
	tb.Helper()
	const perTxn = 1000
	batches := make(chan int)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for first := range batches {
				var b strings.Builder
				b.WriteString(`{"success":[`)
				for i := first; i < min(first+perTxn, n); i++ {
					if i > first {
						b.WriteByte(',')
					}
					fmt.Fprintf(&b, `{"put":{"key":%s,"value":"v%d"}}`, e2e.JSONString(fmt.Sprintf(format, i)), i)
				}
				b.WriteString(`]}`)
				r, err := s.Send(tb.Context(), "POST", "/v1/txn", []byte(b.String()), "Content-Type", "application/json")
				// 503 asks a client to come back (a gateway whose etcd is
				// overloaded answers it); the txn puts the same values
				// again, whether or not it had.
				for retries := 0; err == nil && r.Status == http.StatusServiceUnavailable && retries < 5; retries++ {
					time.Sleep(time.Second)
					r, err = s.Send(tb.Context(), "POST", "/v1/txn", []byte(b.String()), "Content-Type", "application/json")
				}
				if err == nil && r.Status != http.StatusOK {
					err = fmt.Errorf("%s = %d %s", r.Req, r.Status, r.Body)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
feed:
	for first := 0; first < n; first += perTxn {
		select {
		case batches <- first:
		case err := <-errs:
			// A worker gave up: stop feeding, and report it below.
			errs <- err
			break feed
		}
	}
	close(batches)
	wg.Wait()
	close(errs)
	for err := range errs {
		tb.Fatalf("seeding %d keys: %v", n, err)
	}
}

// TestConsoleBrowse browses 100,000 keys: the top level shows the folders
// with their counts without reading the keys below them, a folder of
// 100,000 keys pages a hundred at a time, Find lists the keys with a
// prefix, and Up and Down move through the list.
func TestConsoleBrowse(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t, "--max-txn-ops=1000")
	seedKeys(t, s, 100000, "big/%05d")
	s.Put(t, "app/config", `{"replicas": 2}`)
	s.Put(t, "app/db/url", "postgres://db")
	s.Put(t, "top", "a key at the top level")

	p := openConsole(t, s, "#/keys", 1280, 800)
	// The top level: two folders and a key, from a couple of small reads.
	p.waitText(".children a.folder", "big/")
	p.waitText(".children a.folder", "app/")
	p.waitText(".children a.key", "top")
	if n := p.count(".children li"); n != 3 {
		t.Errorf("the top level shows %d items, want 3 (app/, big/, top):\n%s", n, p.shows())
	}
	// The counts come lazily, for the folders in view.
	p.waitText(`.children li[data-key="big/"] .count`, "100,000")
	p.waitText(`.children li[data-key="app/"] .count`, "2")
	p.waitText(".summary", "100,003 keys below")
	var listed int
	p.eval(`performance.getEntriesByType("resource").filter((e) => e.name.includes("/v1/kv?") && !e.name.includes("count_only")).reduce((n, e) => n + e.encodedBodySize, 0)`, &listed)
	// All 100,000 keys, keys only, would be about 8 MB.
	t.Logf("listing the top level over 100,003 keys read %d bytes of keys", listed)
	if listed > 64<<10 {
		t.Errorf("listing the top level read %d bytes of keys, want a few reads past each folder (under 64 KiB)", listed)
	}

	// A folder of 100,000 keys, a hundred at a time.
	p.click(".children a.folder", "big/")
	p.waitText(".crumbs", "big/")
	p.waitText(".children a.key", "00099")
	if n := p.count(".children li"); n != 100 {
		t.Errorf("big/ shows %d keys at first, want 100", n)
	}
	p.waitText(".summary", "100 items shown so far · 100,000 keys below")
	p.click("button.more", "Load more")
	p.waitText(".children a.key", "00199")
	p.click("button.more", "Load more")
	p.waitText(".children a.key", "00299")
	if n := p.count(".children li"); n != 300 {
		t.Errorf("big/ shows %d keys after loading twice more, want 300", n)
	}

	// Up and Down move through the list, as in a list box.
	p.eval(`document.querySelector(".children a").focus()`, nil)
	p.do(chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.ArrowDown))
	var focused string
	p.eval(`document.activeElement.textContent`, &focused)
	if !strings.Contains(focused, "00002") {
		t.Errorf("after Down twice from the first key, focus is on %q, want big/00002", focused)
	}

	// Find: the keys starting with a prefix, across the whole folder.
	p.markLabels()
	p.fillLabelled("Find", "big/9999")
	p.click("form.find button", "Find")
	p.waitText("#browse-heading", "Keys starting with big/9999")
	p.waitText(".children a.key", "big/99999")
	p.waitText(".summary", "10 keys shown · 10 keys below")

	// Opening a key from the list shows it in the pane.
	p.click(".children a.key", "big/99995")
	p.waitText(".key-pane h2", "big/99995")
	p.waitText(".key-pane .value", "v99995")
}
