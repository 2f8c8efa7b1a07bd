package console

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
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

	p := e2e.OpenConsole(t, s, "#/keys?f=app/", 1280, 800)
	p.Click(".browse .toolbar a", "Deleted keys")
	p.WaitText(".deleted tbody th", "app/a")
	p.WaitText(`.deleted tr[data-key="app/a"]`, "second value")
	if n := p.Count(".deleted tbody tr"); n != 1 {
		t.Errorf("Deleted keys lists %d rows, want 1 (app/a; app/b exists again, other/x is elsewhere):\n%s", n, p.Shows())
	}
	p.Click(`.deleted tr[data-key="app/a"] button`, "Restore")
	p.Confirm("Restore")
	p.WaitText(`.deleted tr[data-key="app/a"]`, "Restored at revision")
	kv := s.Get(t, "app/a")
	if e2e.ValueOf(&kv) != "second value" || kv.Version != 1 {
		t.Fatalf("after the restore app/a = %s, want the value it had before its delete, created anew", e2e.KVString(&kv))
	}
	// The folder's list shows it again, live.
	p.WaitText(".children a.key", "a")

	// The key's history: every version, deletes included, newest first.
	p.GoTo("#/keys?f=app/&k=app/a&pane=history")
	p.WaitText(".history tbody", "deleted")
	var changes []string
	p.Eval(`[...document.querySelectorAll(".history tbody tr")].map((r) => r.cells[1].textContent + " " + r.cells[2].textContent)`, &changes)
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
	p.Click(fmt.Sprintf(`.history tr[data-revision="%d"] input`, v1), "")
	p.Click(fmt.Sprintf(`.history tr[data-revision="%d"] input`, v1+1), "")
	p.Click(".history button", "Compare selected")
	p.WaitText(".diff-area caption", fmt.Sprintf("revision %d → revision %d", v1, v1+1))
	p.WaitText(".diff-area tr.del", "first value")
	p.WaitText(".diff-area tr.ins", "second value")
	// What a change did, against the version before it.
	p.Click(fmt.Sprintf(`.history tr[data-revision="%d"] button`, v1+1), "Changes")
	p.WaitText(".diff-area caption", fmt.Sprintf("app/a: revision %d → revision %d", v1, v1+1))

	// Restore the first version (POST /v1/restore of the key as of its
	// revision), after its dry run.
	p.ForgetNotice()
	p.Click(fmt.Sprintf(`.history tr[data-revision="%d"] button`, v1), "Restore this version")
	p.WaitText("dialog[open] h2", fmt.Sprintf("Restore the key app/a as of revision %d?", v1))
	p.WaitText(`dialog[open] li[data-kind="updated"]`, "1 would be changed")
	p.Confirm("Restore")
	p.WaitText("#notice", fmt.Sprintf("Restored the key app/a as of revision %d at revision", v1))
	if got := s.Get(t, "app/a"); e2e.ValueOf(&got) != "first value" || got.ModRevision <= kv.ModRevision {
		t.Errorf("after restoring revision %d app/a = %s, want %q as a new version", v1, e2e.KVString(&got), "first value")
	}
	// The new version comes live at the top of the history.
	p.WaitText(".history tbody tr:first-child", "updated")

	// The whole tree as of a past revision: app/b as it was before its
	// delete, app/c not yet there, and nothing to edit.
	p.GoTo(fmt.Sprintf("#/keys?f=app/&k=app/a&rev=%d", v1+1))
	p.WaitText(".keys-bar .banner", fmt.Sprintf("as of revision %d", v1+1))
	p.WaitText(".key-pane .value", "second value")
	p.WaitText(".children a.key", "a")
	if n := p.Count(".children li"); n != 1 {
		t.Errorf("as of revision %d the folder shows %d keys, want app/a alone:\n%s", v1+1, n, p.Shows())
	}
	if n := p.Count(".key-pane button.primary"); n != 0 {
		t.Errorf("as of a past revision the key pane shows %d edit buttons, want none", n)
	}
	p.ForgetNotice()
	p.Click(".key-pane button", "Restore this version")
	p.Confirm("Restore")
	p.WaitText("#notice", "Restored app/a")
	if got := s.Get(t, "app/a"); e2e.ValueOf(&got) != "second value" {
		t.Errorf("after restoring the value as of revision %d app/a = %s, want %q", v1+1, e2e.KVString(&got), "second value")
	}
	if p.LiveState() != "idle" {
		t.Errorf("viewing a past revision, the live indicator says %q, want idle", p.LiveState())
	}

	// Delete the whole folder, after a count and a typed confirmation.
	p.GoTo("#/keys?f=app/")
	p.Click(".browse .toolbar button", "Delete folder")
	p.WaitText("dialog[open] h2", "Delete 3 keys?")
	p.Confirm("Delete 3 keys")
	p.WaitText("#notice", "Deleted 3 keys at revision")
	var l client.ListResponse
	s.Do(t, "GET", "/v1/kv?key=app/&prefix=true&count_only=true", nil).Ok(t, http.StatusOK, &l)
	if l.Count != 0 {
		t.Errorf("after deleting the folder app/ holds %d keys, want 0", l.Count)
	}
	p.WaitNoText(".children a.key", "a")
	p.Click(".browse .toolbar a", "Deleted keys")
	p.WaitText(`.deleted tr[data-key="app/c"]`, "c")
	if n := p.Count(".deleted tbody tr"); n != 3 {
		t.Errorf("Deleted keys lists %d rows after deleting the folder, want 3:\n%s", n, p.Shows())
	}
}
