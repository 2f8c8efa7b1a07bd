package console

import (
	"net/http"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/tests/e2e"
)

// TestConsoleEditConflict edits a JSON value while another writer changes
// it. The page says so as it happens; the save, sent with If-Match, is
// refused with 412, and the page shows the other value beside the user's
// as a diff. The user first takes theirs, then, on a second conflict,
// saves over it, which writes exactly the user's value.
func TestConsoleEditConflict(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	s.Put(t, "app/config", "{\n  \"replicas\": 2,\n  \"image\": \"web:1\"\n}")

	p := e2e.OpenConsole(t, s, "#/keys?f=app/&k=app/config", 1280, 800)
	p.WaitText(".key-pane .value", `"replicas": 2`)
	p.WaitText(".key-pane .meta", "JSON")
	p.WaitText(`[role="tab"][aria-selected="true"]`, "JSON")
	p.Click(`[role="tab"]`, "YAML")
	p.WaitText(".key-pane .value", "replicas: 2")

	// Editing checks the syntax as one types.
	p.Click(".key-pane button", "Edit")
	p.MarkLabels()
	p.FillLabelled("Value", `{"replicas": 3,`)
	p.WaitText(".editor .check", "not valid JSON")
	mine := "{\n  \"replicas\": 3,\n  \"image\": \"web:1\"\n}"
	p.FillLabelled("Value", mine)
	p.WaitText(".editor .check", "valid JSON")

	// Another writer saves meanwhile: the page says so before the save.
	theirs := "{\n  \"replicas\": 5,\n  \"image\": \"web:1\"\n}"
	theirRev := s.Put(t, "app/config", theirs)
	p.WaitText(".key-pane .notice", "Another writer saved this key")
	p.Click(".edit button", "Save")
	p.WaitText(".conflict h3", "Conflict")
	p.WaitText(".conflict", "Another writer saved this key at revision")
	p.WaitText(".conflict table.diff tr.del", `"replicas": 5`)
	p.WaitText(".conflict table.diff tr.ins", `"replicas": 3`)
	if n := p.Count(".conflict table.diff tr.del") + p.Count(".conflict table.diff tr.ins"); n != 2 {
		t.Errorf("the diff shows %d changed lines, want 2 (one line differs):\n%s", n, p.Shows())
	}
	if got := s.Get(t, "app/config"); e2e.ValueOf(&got) != theirs || got.ModRevision != theirRev {
		t.Fatalf("after the refused save app/config = %s, want theirs at revision %d", e2e.KVString(&got), theirRev)
	}

	// Take theirs: the pane shows it, and editing starts from it.
	p.Click(".conflict button", "Use theirs")
	p.WaitNoText(".conflict h3", "Conflict")
	// Still shown as YAML, the rendering chosen before.
	p.WaitText(".key-pane .value", "replicas: 5")

	// A second conflict, resolved by saving over theirs.
	p.Click(".key-pane button", "Edit")
	p.MarkLabels()
	mine = "{\n  \"replicas\": 4,\n  \"image\": \"web:2\"\n}"
	p.FillLabelled("Value", mine)
	theirRev = s.Put(t, "app/config", "{\"replicas\": 6}")
	p.Click(".edit button", "Save")
	p.WaitText(".conflict table.diff tr.ins", `"image": "web:2"`)
	p.Click(".conflict button", "Save mine over theirs")
	p.WaitText("#notice", "Saved app/config at revision")
	p.WaitText(".key-pane .value", "replicas: 4")
	got := s.Get(t, "app/config")
	if e2e.ValueOf(&got) != mine || got.ModRevision <= theirRev {
		t.Errorf("after saving over theirs app/config = %s, want %q after revision %d", e2e.KVString(&got), mine, theirRev)
	}

	// Create and delete, each with its precondition.
	p.GoTo("#/keys?f=app/&pane=new")
	p.MarkLabels()
	p.FillLabelled("Key", "app/config")
	p.FillLabelled("Value", "x")
	p.Click(".new-key button", "Create")
	p.WaitText(".new-key .problem", "exists already")
	p.FillLabelled("Key", "app/new")
	p.Click(".new-key button", "Create")
	p.WaitText(".key-pane h2", "app/new")
	p.WaitText(".children a.key", "new")
	if kv := s.Get(t, "app/new"); e2e.ValueOf(&kv) != "x" || kv.Version != 1 {
		t.Errorf("after creating app/new = %s, want x at version 1", e2e.KVString(&kv))
	}
	p.Click(".key-pane button", "Delete")
	p.Confirm("Delete")
	p.WaitText("#notice", "Deleted app/new")
	p.WaitNoText(".children a.key", "new")
	s.Do(t, "GET", e2e.KeyPath("app/new"), nil).WantError(t, http.StatusNotFound, "key_not_found")
	if strings.Contains(p.Text(".children"), "new") {
		t.Errorf("the list still shows app/new after its delete")
	}

	// A key and a value that are not UTF-8: shown escaped and as base64
	// and hex, edited as base64, deleted by their bytes.
	binKey := "bin/\xff\x01"
	s.Do(t, "PUT", e2e.KeyPath(binKey), []byte{0x00, 0xff, 0x10}).Want(t, http.StatusOK)
	p.GoTo("#/keys?f=bin/")
	p.Click(".children a.key", `\xff\x01`)
	p.WaitText(".key-pane h2", `bin/\xff\x01`)
	p.WaitText(`[role="tab"][aria-selected="true"]`, "Base64")
	p.WaitText(".key-pane .value", "AP8Q")
	p.Click(`[role="tab"]`, "Hex")
	p.WaitText(".key-pane .value", "00 ff 10")
	p.Click(".key-pane button", "Edit")
	p.MarkLabels()
	p.FillLabelled("Value", "AQID")
	p.WaitText(".editor .check", "valid base64")
	p.ForgetNotice()
	p.Click(".edit button", "Save")
	p.WaitText("#notice", `Saved bin/\xff\x01`)
	if kv := s.Get(t, binKey); e2e.ValueOf(&kv) != "\x01\x02\x03" {
		t.Errorf("after saving base64 AQID the key holds %q, want bytes 1 2 3", e2e.ValueOf(&kv))
	}
	p.Click(".key-pane button", "Delete")
	p.Confirm("Delete")
	p.WaitText("#notice", `Deleted bin/\xff\x01`)
	s.Do(t, "GET", e2e.KeyPath(binKey), nil).WantError(t, http.StatusNotFound, "key_not_found")
}
