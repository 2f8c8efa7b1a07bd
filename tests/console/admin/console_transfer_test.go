package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// exportOf reads GET /v1/export of the keys under prefix at revision,
// from the server itself.
func exportOf(t *testing.T, s *e2e.Server, prefix string, revision int64, header ...string) []byte {
	t.Helper()
	r := s.Do(t, "GET", fmt.Sprintf("/v1/export?key=%s&prefix=true&revision=%d", prefix, revision), nil, header...).Want(t, http.StatusOK)
	return r.Body
}

// exportRevision reads the revision of an export's header line.
func exportRevision(t *testing.T, file []byte) int64 {
	t.Helper()
	line, _, _ := bytes.Cut(file, []byte("\n"))
	var h struct {
		Header struct{ Revision int64 } `json:"header"`
	}
	if err := json.Unmarshal(line, &h); err != nil || h.Header.Revision == 0 {
		t.Fatalf("the export's first line %q is not its header: %v", line, err)
	}
	return h.Header.Revision
}

// currentRevision is the store's revision now.
func currentRevision(t *testing.T, s *e2e.Server) int64 {
	t.Helper()
	return s.Do(t, "GET", "/v1/kv?key=zz&count_only=true", nil).Want(t, http.StatusOK).Revision(t)
}

// expectDownload lets the page's browser context download into a
// directory of the test, and returns a function that waits for the next
// download to complete and returns the file.
func expectDownload(t *testing.T, p *e2e.ConsolePage) func() []byte {
	t.Helper()
	dir := t.TempDir()
	done := make(chan string, 1)
	ctx, cancel := context.WithCancel(p.Ctx)
	t.Cleanup(cancel)
	// Downloads are the browser's: its own events, for the tab's browser context.
	progress := chromedp.BrowserEvents(ctx, browser.DownloadProgress)
	go func() {
		for ev, err := range progress {
			if err != nil {
				return
			}
			// The browser tells of every context's downloads: this
			// page's are those saved into dir.
			if _, err := os.Stat(filepath.Join(dir, ev.GUID)); ev.State == browser.DownloadProgressStateCompleted && err == nil {
				select {
				case done <- ev.GUID:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	if _, err := chromedp.CallBrowser(p.Ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior:         browser.SetDownloadBehaviorBehaviorAllowAndName,
		BrowserContextID: chromedp.FromContext(p.Ctx).BrowserContextID,
		DownloadPath:     dir,
		EventsEnabled:    new(true),
	}); err != nil {
		t.Fatal(err)
	}
	return func() []byte {
		t.Helper()
		var guid string
		select {
		case guid = <-done:
		case <-time.After(e2e.ConsoleTimeout):
			t.Fatalf("no download completed within %v; the page shows:\n%s", e2e.ConsoleTimeout, p.Shows())
		}
		file, err := os.ReadFile(filepath.Join(dir, guid))
		if err != nil {
			t.Fatal(err)
		}
		return file
	}
}

// TestConsoleExportImport exports a folder with the page's Export button
// (the browser's own download) and checks the file against the server's
// export; then imports an edited file: the preview is a dry run that
// changes nothing, Import applies it in one revision, a change made after
// the preview stops it (412), and a file with a key outside the folder is
// refused in the server's words.
func TestConsoleExportImport(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	s.Put(t, "app/a", "alpha")
	s.Put(t, "app/b", `{"n":1}`)
	s.Put(t, "app/c", "to be dropped")
	s.Do(t, "PUT", e2e.KeyPath("app/bin"), []byte{0xff, 0x00, 0xfe}).Want(t, http.StatusOK)
	s.Put(t, "other/x", "outside")

	p := e2e.OpenConsole(t, s, "#/keys?f=app/", 1280, 800)
	downloaded := expectDownload(t, p)
	p.WaitText(".children a.key", "bin")
	p.Click(".browse .toolbar button", "Export")
	p.WaitText("#notice", "Exporting 4 keys (every key under app/) as of revision")
	file := downloaded()
	rev := exportRevision(t, file)
	if want := exportOf(t, s, "app/", rev); !bytes.Equal(file, want) {
		t.Fatalf("the page's export:\n%s\nthe server's export at revision %d:\n%s", file, rev, want)
	}

	// Import an edited file: a changed, a new, and a missing key (replace).
	edited := strings.Replace(string(file), `"alpha"`, `"ALPHA"`, 1)
	lines := strings.Split(strings.TrimSpace(edited), "\n")
	lines = slices.DeleteFunc(lines, func(l string) bool { return strings.Contains(l, `"app/c"`) })
	lines = append(lines, `{"key":"app/new","value":"fresh"}`)
	importFile := filepath.Join(t.TempDir(), "edited.ndjson")
	if err := os.WriteFile(importFile, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p.Click(".browse .toolbar a", "Import")
	p.WaitText(".import-pane h2", "Import into every key under app/")
	p.Do(chromedp.SetUploadFiles(`.import-pane input[type="file"]`, []string{importFile}))
	p.MarkLabels()
	p.Eval(`(() => { const m = document.querySelector(".import-pane select"); m.value = "replace"; m.dispatchEvent(new Event("change")); return true; })()`, nil)
	before := currentRevision(t, s)
	p.Click(".import-pane button", "Preview")
	p.WaitText(".import-result h3", "Preview: as of revision")
	p.WaitText(`.import-result li[data-kind="created"]`, "1 would be created")
	p.WaitText(`.import-result li[data-kind="updated"]`, "1 would be changed")
	p.WaitText(`.import-result li[data-kind="deleted"]`, "1 would be deleted")
	p.WaitText(`.import-result li[data-kind="unchanged"]`, "2 unchanged")
	p.WaitText(`.import-result details[data-kind="deleted"]`, "app/c")
	if now := currentRevision(t, s); now != before {
		t.Fatalf("the preview moved the store from revision %d to %d: a dry run changes nothing", before, now)
	}

	// Someone changes the folder after the preview: Import refuses.
	s.Put(t, "app/b", `{"n":2}`)
	p.Click(".import-result button", "Import")
	p.WaitText(".import-result .problem", "changed after the preview")
	if kv := s.Get(t, "app/a"); e2e.ValueOf(&kv) != "alpha" {
		t.Fatalf("after a refused import app/a = %s, want it unchanged", e2e.KVString(&kv))
	}

	// Preview again, and import.
	p.Click(".import-pane button", "Preview")
	p.WaitText(".import-result h3", "Preview")
	p.WaitText(`.import-result li[data-kind="updated"]`, "2 would be changed")
	before = currentRevision(t, s)
	p.Click(".import-result button", "Import")
	p.WaitText(".import-result h3", "Imported at revision")
	if now := currentRevision(t, s); now != before+1 {
		t.Errorf("the import moved the store from revision %d to %d, want one revision", before, now)
	}
	for k, want := range map[string]string{"app/a": "ALPHA", "app/b": `{"n":1}`, "app/new": "fresh", "app/bin": "\xff\x00\xfe"} {
		if kv := s.Get(t, k); e2e.ValueOf(&kv) != want {
			t.Errorf("after the import %s = %s, want %q", k, e2e.KVString(&kv), want)
		}
	}
	s.Do(t, "GET", e2e.KeyPath("app/c"), nil).WantError(t, http.StatusNotFound, "key_not_found")
	if kv := s.Get(t, "other/x"); e2e.ValueOf(&kv) != "outside" {
		t.Errorf("the import of app/ changed other/x: %s", e2e.KVString(&kv))
	}

	// A file with a key outside the folder: the server's error, nothing changed.
	bad := filepath.Join(t.TempDir(), "bad.ndjson")
	if err := os.WriteFile(bad, []byte("{\"key\":\"app/a\",\"value\":\"x\"}\n{\"key\":\"other/x\",\"value\":\"y\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p.Do(chromedp.SetUploadFiles(`.import-pane input[type="file"]`, []string{bad}))
	p.WaitNoText(".import-result", "Imported")
	before = currentRevision(t, s)
	p.Click(".import-pane button", "Preview")
	p.WaitText(".import-result .problem", "(invalid_argument)")
	p.WaitText(".import-result .problem", "other/x")
	if now := currentRevision(t, s); now != before {
		t.Errorf("a refused import moved the store from revision %d to %d", before, now)
	}
}

// TestConsoleExportWithToken exports with auth on: a link cannot carry
// the token, so the page streams the answer into the file the user
// picks. The picker is the browser's own origin-private file system
// here (a headless browser shows no dialog): the file is written through
// the same FileSystemWritableFileStream a picked file is. Without that
// API, the page downloads a Blob of the answer.
func TestConsoleExportWithToken(t *testing.T) {
	t.Parallel()
	s := startAuthServer(t)
	root := asRoot(t, s)
	for i := range 50 {
		e2e.AuthDo(t, s, root, http.StatusOK, "PUT", e2e.KeyPath(fmt.Sprintf("app/k%02d", i)), strings.Repeat("v", i))
	}
	p := e2e.OpenConsole(t, s, "#/keys?f=app/", 1280, 800)
	p.SignIn("root", "root-pw")
	p.WaitText(".children a.key", "k49")
	p.Eval(`(window.showSaveFilePicker = async (o) => (await navigator.storage.getDirectory()).getFileHandle(o.suggestedName, { create: true }), true)`, nil)
	p.Click(".browse .toolbar button", "Export")
	p.WaitText("#notice", "Exported 51 keys (every key under app/) as of revision")
	var name string
	p.Eval(`document.getElementById("notice").textContent.match(/ to (\S+\.ndjson) /)[1]`, &name)
	p.Eval(fmt.Sprintf(`(async () => { const f = await (await (await navigator.storage.getDirectory()).getFileHandle(%s)).getFile(); window.exported = await f.text(); })() && true`, e2e.Js(name)), nil)
	p.Wait("the exported file read", `typeof window.exported === "string"`)
	var file string
	p.Eval(`window.exported`, &file)
	rev := exportRevision(t, []byte(file))
	want := exportOf(t, s, "app/", rev, "Authorization", "Bearer "+root.Token)
	if file != string(want) {
		t.Fatalf("the page's export (%d bytes) differs from the server's at revision %d (%d bytes):\n%s", len(file), rev, len(want), file)
	}

	// A browser that cannot stream into a file: a Blob, then its download.
	downloaded := expectDownload(t, p)
	p.Eval(`(window.showSaveFilePicker = undefined, true)`, nil)
	p.ForgetNotice()
	p.Click(".browse .toolbar button", "Export")
	p.WaitText("#notice", "Exported 51 keys (every key under app/) as of revision")
	held := downloaded()
	if want := exportOf(t, s, "app/", exportRevision(t, held), "Authorization", "Bearer "+root.Token); !bytes.Equal(held, want) {
		t.Fatalf("the page's export through a Blob (%d bytes) differs from the server's (%d bytes):\n%s", len(held), len(want), held)
	}
}

// TestConsoleLeasePages pages through more leases than a page shows:
// every lease once, in ID order, a page at a time; back and to the
// first page; and a lease opened by its ID shown even when it is not on
// the page.
func TestConsoleLeasePages(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	const n, page = 250, 100 // leases.js PAGE
	var ids []int64
	for range n {
		var l client.LeaseResponse
		s.Do(t, "POST", "/v1/leases", []byte(`{"ttl":600}`), "Content-Type", "application/json").Ok(t, http.StatusCreated, &l)
		ids = append(ids, l.Id)
	}
	slices.Sort(ids)
	shown := func(p *e2e.ConsolePage) []int64 {
		var got []int64
		p.Eval(`[...document.querySelectorAll(".leases tr[data-lease]:not(.pinned)")].map((r) => Number(r.dataset.lease))`, &got)
		return got
	}
	p := e2e.OpenConsole(t, s, "#/leases", 1280, 800)
	var seen []int64
	var pages [][]int64
	for i := 0; ; i++ {
		from := i * page
		last := min(from+page, n)
		p.WaitText(".leases .summary", fmt.Sprintf("Leases %d to %d, by ID", from+1, last))
		got := shown(p)
		if len(got) != last-from {
			t.Fatalf("page %d shows %d leases, want %d", i+1, len(got), last-from)
		}
		pages = append(pages, got)
		seen = append(seen, got...)
		if last == n {
			p.Wait("no next page", `document.querySelector(".pager button:last-child").disabled`)
			break
		}
		p.WaitText(".leases .summary", "more follow")
		p.Click(".pager button", "Next page")
	}
	if !slices.Equal(seen, ids) {
		t.Fatalf("the pages showed %d leases %v…, want the %d granted, each once, by ID", len(seen), seen[:min(5, len(seen))], n)
	}
	p.Click(".pager button", "Previous page")
	p.WaitText(".leases .summary", fmt.Sprintf("Leases %d to %d", page+1, 2*page))
	if got := shown(p); !slices.Equal(got, pages[1]) {
		t.Errorf("back on page 2 the page shows %v, want %v", got, pages[1])
	}
	p.Click(".pager button", "First page")
	p.WaitText(".leases .summary", fmt.Sprintf("Leases 1 to %d", page))

	// The last lease, opened by its ID from page 1: shown on top of it.
	p.GoTo(fmt.Sprintf("#/leases?id=%d", ids[n-1]))
	p.WaitText(fmt.Sprintf(`tr.pinned[data-lease="%d"]`, ids[n-1]), "10 min")
	p.WaitText(".leases .summary", fmt.Sprintf("Leases 1 to %d", page))
}

// TestConsoleKeyTTL creates a key that expires with the new key form's
// TTL (PUT ?ttl): the key shows its lease counting down; editing it
// without a TTL keeps its lease, with one gives it a new lease and
// revokes the old; a TTL with a lease ID is refused in the server's
// words, and nothing is created.
func TestConsoleKeyTTL(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	p := e2e.OpenConsole(t, s, "#/keys?f=tmp/&pane=new", 1280, 800)
	p.WaitText(".key-pane h2", "New key")
	p.MarkLabels()
	p.FillLabelled("Key", "tmp/session")
	p.FillLabelled("Value", "token-1")
	p.FillLabelled("Expires after (seconds)", "120")
	p.Click(".new-key button", "Create")
	p.WaitText("#notice", "Created tmp/session")
	kv := s.Get(t, "tmp/session")
	if kv.Lease == 0 {
		t.Fatalf("the key created with a TTL has no lease: %s", e2e.KVString(&kv))
	}
	var ttl client.LeaseTimeToLive
	s.Do(t, "GET", fmt.Sprintf("/v1/leases/%d", kv.Lease), nil).Ok(t, http.StatusOK, &ttl)
	if ttl.GrantedTtl != 120 {
		t.Errorf("the key's lease has TTL %d, want 120", ttl.GrantedTtl)
	}
	p.WaitText(".key-pane .lease-badge", fmt.Sprintf("lease %d", kv.Lease))
	p.WaitText(".key-pane .lease-badge", "expires in")
	p.WaitText(".key-pane .lease-badge", "(TTL 2 min 0 s)")
	left := shownSeconds(p.Text(".key-pane .lease-badge .ttl"))
	if left <= 0 || left > 120 {
		t.Errorf("the key shows %q, want at most 120 s left", p.Text(".key-pane .lease-badge .ttl"))
	}

	// Editing the value without a TTL keeps the lease.
	p.Click(".key-pane button", "Edit")
	p.MarkLabels()
	p.FillLabelled("Value", "token-2")
	p.ForgetNotice()
	p.Click(".key-pane form.edit button", "Save")
	p.WaitText("#notice", "Saved tmp/session")
	if got := s.Get(t, "tmp/session"); e2e.ValueOf(&got) != "token-2" || got.Lease != kv.Lease {
		t.Fatalf("after an edit without a TTL the key is %s, want token-2 on lease %d", e2e.KVString(&got), kv.Lease)
	}

	// With a TTL: a new lease, and the old one, which holds nothing else, revoked.
	p.WaitText(".key-pane button", "Edit")
	p.Click(".key-pane button", "Edit")
	p.MarkLabels()
	p.FillLabelled("Value", "token-3")
	p.FillLabelled("Expires after (seconds)", "300")
	p.ForgetNotice()
	p.Click(".key-pane form.edit button", "Save")
	p.WaitText("#notice", "Saved tmp/session")
	got := s.Get(t, "tmp/session")
	if e2e.ValueOf(&got) != "token-3" || got.Lease == 0 || got.Lease == kv.Lease {
		t.Fatalf("after an edit with a TTL the key is %s, want token-3 on a new lease", e2e.KVString(&got))
	}
	s.Do(t, "GET", fmt.Sprintf("/v1/leases/%d", got.Lease), nil).Ok(t, http.StatusOK, &ttl)
	if ttl.GrantedTtl != 300 {
		t.Errorf("the key's new lease has TTL %d, want 300", ttl.GrantedTtl)
	}
	s.Do(t, "GET", fmt.Sprintf("/v1/leases/%d", kv.Lease), nil).WantError(t, http.StatusNotFound, "lease_not_found")
	p.WaitText(".key-pane .lease-badge", fmt.Sprintf("lease %d", got.Lease))
	p.WaitText(".key-pane .lease-badge", "(TTL 5 min 0 s)")

	// A TTL and a lease ID: the server's refusal, nothing created.
	p.GoTo("#/keys?f=tmp/&pane=new")
	p.WaitText(".key-pane h2", "New key")
	p.MarkLabels()
	p.FillLabelled("Key", "tmp/both")
	p.FillLabelled("Lease ID", fmt.Sprint(got.Lease))
	p.FillLabelled("Expires after (seconds)", "60")
	p.Click(".new-key button", "Create")
	p.WaitText(".new-key .problem", "cannot go with lease")
	p.WaitText(".new-key .problem", "(invalid_argument)")
	s.Do(t, "GET", e2e.KeyPath("tmp/both"), nil).WantError(t, http.StatusNotFound, "key_not_found")
}

// TestConsoleRestoreRange restores a folder as of a past revision from
// its history: the dry run's counts and keys in the confirmation, nothing
// changed until confirmed, then one revision that makes the folder what
// it was, other folders untouched; and again from the folder seen as of
// a past revision.
func TestConsoleRestoreRange(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	for i := range 10 {
		s.Put(t, fmt.Sprintf("cfg/k%d", i), fmt.Sprintf("v%d", i))
	}
	was := s.Put(t, "other/o", "before")
	for i := range 3 {
		s.Do(t, "DELETE", e2e.KeyPath(fmt.Sprintf("cfg/k%d", i)), nil).Want(t, http.StatusOK)
	}
	s.Put(t, "cfg/k5", "changed")
	s.Put(t, "cfg/k6", "changed")
	changed := s.Put(t, "cfg/extra", "created after")
	s.Put(t, "other/o", "after")

	p := e2e.OpenConsole(t, s, "#/keys?f=cfg/&pane=history", 1280, 800)
	p.WaitText(".history tbody", "created after")
	p.MarkLabels()
	p.FillLabelled("Restore all of it as of revision", fmt.Sprint(was))
	p.Click(".history .range-restore button", "Restore as of")
	p.WaitText("dialog[open] h2", fmt.Sprintf("Restore every key under cfg/ as of revision %d?", was))
	p.WaitText(`dialog[open] li[data-kind="created"]`, "3 would be created")
	p.WaitText(`dialog[open] li[data-kind="updated"]`, "2 would be changed")
	p.WaitText(`dialog[open] li[data-kind="deleted"]`, "1 would be deleted")
	p.WaitText(`dialog[open] details[data-kind="deleted"]`, "cfg/extra")
	before := currentRevision(t, s)
	p.Confirm("Restore")
	p.WaitText("#notice", fmt.Sprintf("Restored every key under cfg/ as of revision %d at revision %d: 3 created, 2 changed, 1 deleted", was, before+1))
	if now, then := exportOf(t, s, "cfg/", 0), exportOf(t, s, "cfg/", was); !sameKeys(t, now, then) {
		t.Errorf("after the restore cfg/ holds\n%s\nwant what it held at revision %d:\n%s", now, was, then)
	}
	if kv := s.Get(t, "other/o"); e2e.ValueOf(&kv) != "after" {
		t.Errorf("restoring cfg/ changed other/o: %s", e2e.KVString(&kv))
	}
	// The new revision comes live into the history.
	p.WaitText(fmt.Sprintf(`.history tr[data-revision="%d"]`, before+1), "deleted")

	// The folder as of a past revision offers to bring that back.
	p.GoTo(fmt.Sprintf("#/keys?f=cfg/&rev=%d", changed))
	p.WaitText(".children a.key", "extra")
	p.Click(".keys-bar .banner button", fmt.Sprintf("Restore every key under cfg/ as of revision %d", changed))
	p.WaitText(`dialog[open] li[data-kind="deleted"]`, "3 would be deleted")
	p.WaitText(`dialog[open] li[data-kind="created"]`, "1 would be created")
	// Over etcd the console's stream takes revisions of the cluster of
	// its own (its record): the restore's is the one after the current.
	before = currentRevision(t, s)
	p.Confirm("Restore")
	p.WaitText("#notice", fmt.Sprintf("as of revision %d at revision %d: 1 created, 2 changed, 3 deleted", changed, before+1))
	if now, then := exportOf(t, s, "cfg/", 0), exportOf(t, s, "cfg/", changed); !sameKeys(t, now, then) {
		t.Errorf("after the second restore cfg/ holds\n%s\nwant what it held at revision %d:\n%s", now, changed, then)
	}
	// Back to now, where the restore is seen.
	p.Wait("the page back at the present", `!location.hash.includes("rev=")`)
	p.WaitText(".children a.key", "extra")
}

// sameKeys reports whether two exports hold the same keys and values.
func sameKeys(t *testing.T, a, b []byte) bool {
	t.Helper()
	pairs := func(file []byte) []string {
		var out []string
		for i, line := range strings.Split(strings.TrimSpace(string(file)), "\n") {
			if i == 0 {
				continue
			}
			var kv client.KeyValue
			if err := json.Unmarshal([]byte(line), &kv); err != nil {
				t.Fatalf("export line %q: %v", line, err)
			}
			out = append(out, e2e.KeyOf(&kv)+"="+e2e.ValueOf(&kv))
		}
		return out
	}
	return slices.Equal(pairs(a), pairs(b))
}
