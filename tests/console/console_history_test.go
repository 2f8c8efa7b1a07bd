package console

import (
	"github.com/httpkv/httpkv/tests/e2e"

	"fmt"
	"net/http"
	"testing"

	"github.com/httpkv/httpkv/openapi/client"
)

// TestConsoleRestoreDeleted finds a deleted key under a folder in the
// page's "Deleted keys", with its last value, and restores it; a key
// deleted and then created again is not listed. Then it compares two
// versions in the key's history, restores an older one, and reads the
// whole folder as of a past revision.
func TestConsoleRestoreDeleted(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	v1 := s.Put(t, "app/a", "first value")
	s.Put(t, "app/a", "second value")
	s.Do(t, "DELETE", e2e.KeyPath("app/a"), nil).Want(t, http.StatusOK)
	s.Put(t, "app/b", "b1")
	s.Do(t, "DELETE", e2e.KeyPath("app/b"), nil).Want(t, http.StatusOK)
	s.Put(t, "app/b", "b2")
	s.Put(t, "app/c", "c")
	s.Put(t, "other/x", "outside the folder")
	s.Do(t, "DELETE", e2e.KeyPath("other/x"), nil).Want(t, http.StatusOK)

	p := openConsole(t, s, "#/keys?f=app/", 1280, 800)
	p.click(".browse .toolbar a", "Deleted keys")
	p.waitText(".deleted tbody th", "app/a")
	p.waitText(`.deleted tr[data-key="app/a"]`, "second value")
	if n := p.count(".deleted tbody tr"); n != 1 {
		t.Errorf("Deleted keys lists %d rows, want 1 (app/a; app/b exists again, other/x is elsewhere):\n%s", n, p.shows())
	}
	p.click(`.deleted tr[data-key="app/a"] button`, "Restore")
	p.confirm("Restore")
	p.waitText(`.deleted tr[data-key="app/a"]`, "Restored at revision")
	kv := s.Get(t, "app/a")
	if e2e.ValueOf(&kv) != "second value" || kv.Version != 1 {
		t.Fatalf("after the restore app/a = %s, want the value it had before its delete, created anew", e2e.KVString(&kv))
	}
	// The folder's list shows it again, live.
	p.waitText(".children a.key", "a")

	// The key's history: every version, deletes included, newest first.
	p.goTo("#/keys?f=app/&k=app/a&pane=history")
	p.waitText(".history tbody", "deleted")
	var changes []string
	p.eval(`[...document.querySelectorAll(".history tbody tr")].map((r) => r.cells[1].textContent + " " + r.cells[2].textContent)`, &changes)
	want := []string{
		fmt.Sprintf("%d created", kv.ModRevision),
		fmt.Sprintf("%d deleted", v1+2),
		fmt.Sprintf("%d updated", v1+1),
		fmt.Sprintf("%d created", v1),
	}
	if fmt.Sprint(changes) != fmt.Sprint(want) {
		t.Errorf("the history of app/a shows %q, want %q", changes, want)
	}
	// Compare the first two versions.
	p.click(fmt.Sprintf(`.history tr[data-revision="%d"] input`, v1), "")
	p.click(fmt.Sprintf(`.history tr[data-revision="%d"] input`, v1+1), "")
	p.click(".history button", "Compare selected")
	p.waitText(".diff-area caption", fmt.Sprintf("revision %d → revision %d", v1, v1+1))
	p.waitText(".diff-area tr.del", "first value")
	p.waitText(".diff-area tr.ins", "second value")
	// What a change did, against the version before it.
	p.click(fmt.Sprintf(`.history tr[data-revision="%d"] button`, v1+1), "Changes")
	p.waitText(".diff-area caption", fmt.Sprintf("app/a: revision %d → revision %d", v1, v1+1))

	// Restore the first version (POST /v1/restore of the key as of its
	// revision), after its dry run.
	p.forgetNotice()
	p.click(fmt.Sprintf(`.history tr[data-revision="%d"] button`, v1), "Restore this version")
	p.waitText("dialog[open] h2", fmt.Sprintf("Restore the key app/a as of revision %d?", v1))
	p.waitText(`dialog[open] li[data-kind="updated"]`, "1 would be changed")
	p.confirm("Restore")
	p.waitText("#notice", fmt.Sprintf("Restored the key app/a as of revision %d at revision", v1))
	if got := s.Get(t, "app/a"); e2e.ValueOf(&got) != "first value" || got.ModRevision <= kv.ModRevision {
		t.Errorf("after restoring revision %d app/a = %s, want %q as a new version", v1, e2e.KVString(&got), "first value")
	}
	// The new version comes live at the top of the history.
	p.waitText(".history tbody tr:first-child", "updated")

	// The whole tree as of a past revision: app/b as it was before its
	// delete, app/c not yet there, and nothing to edit.
	p.goTo(fmt.Sprintf("#/keys?f=app/&k=app/a&rev=%d", v1+1))
	p.waitText(".keys-bar .banner", fmt.Sprintf("as of revision %d", v1+1))
	p.waitText(".key-pane .value", "second value")
	p.waitText(".children a.key", "a")
	if n := p.count(".children li"); n != 1 {
		t.Errorf("as of revision %d the folder shows %d keys, want app/a alone:\n%s", v1+1, n, p.shows())
	}
	if n := p.count(".key-pane button.primary"); n != 0 {
		t.Errorf("as of a past revision the key pane shows %d edit buttons, want none", n)
	}
	p.forgetNotice()
	p.click(".key-pane button", "Restore this version")
	p.confirm("Restore")
	p.waitText("#notice", "Restored app/a")
	if got := s.Get(t, "app/a"); e2e.ValueOf(&got) != "second value" {
		t.Errorf("after restoring the value as of revision %d app/a = %s, want %q", v1+1, e2e.KVString(&got), "second value")
	}
	if p.liveState() != "idle" {
		t.Errorf("viewing a past revision, the live indicator says %q, want idle", p.liveState())
	}

	// Delete the whole folder, after a count and a typed confirmation.
	p.goTo("#/keys?f=app/")
	p.click(".browse .toolbar button", "Delete folder")
	p.waitText("dialog[open] h2", "Delete 3 keys?")
	p.confirm("Delete 3 keys")
	p.waitText("#notice", "Deleted 3 keys at revision")
	var l client.ListResponse
	s.Do(t, "GET", "/v1/kv?key=app/&prefix=true&count_only=true", nil).Ok(t, http.StatusOK, &l)
	if l.Count != 0 {
		t.Errorf("after deleting the folder app/ holds %d keys, want 0", l.Count)
	}
	p.waitNoText(".children a.key", "a")
	p.click(".browse .toolbar a", "Deleted keys")
	p.waitText(`.deleted tr[data-key="app/c"]`, "c")
	if n := p.count(".deleted tbody tr"); n != 3 {
		t.Errorf("Deleted keys lists %d rows after deleting the folder, want 3:\n%s", n, p.shows())
	}
}
