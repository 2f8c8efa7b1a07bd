package console

import (
	"github.com/httpkv/httpkv/tests/e2e"

	"net/http"
	"strings"
	"testing"
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

	p := openConsole(t, s, "#/keys?f=app/&k=app/config", 1280, 800)
	p.waitText(".key-pane .value", `"replicas": 2`)
	p.waitText(".key-pane .meta", "JSON")
	p.waitText(`[role="tab"][aria-selected="true"]`, "JSON")
	p.click(`[role="tab"]`, "YAML")
	p.waitText(".key-pane .value", "replicas: 2")

	// Editing checks the syntax as one types.
	p.click(".key-pane button", "Edit")
	p.markLabels()
	p.fillLabelled("Value", `{"replicas": 3,`)
	p.waitText(".editor .check", "not valid JSON")
	mine := "{\n  \"replicas\": 3,\n  \"image\": \"web:1\"\n}"
	p.fillLabelled("Value", mine)
	p.waitText(".editor .check", "valid JSON")

	// Another writer saves meanwhile: the page says so before the save.
	theirs := "{\n  \"replicas\": 5,\n  \"image\": \"web:1\"\n}"
	theirRev := s.Put(t, "app/config", theirs)
	p.waitText(".key-pane .notice", "Another writer saved this key")
	p.click(".edit button", "Save")
	p.waitText(".conflict h3", "Conflict")
	p.waitText(".conflict", "Another writer saved this key at revision")
	p.waitText(".conflict table.diff tr.del", `"replicas": 5`)
	p.waitText(".conflict table.diff tr.ins", `"replicas": 3`)
	if n := p.count(".conflict table.diff tr.del") + p.count(".conflict table.diff tr.ins"); n != 2 {
		t.Errorf("the diff shows %d changed lines, want 2 (one line differs):\n%s", n, p.shows())
	}
	if got := s.Get(t, "app/config"); e2e.ValueOf(&got) != theirs || got.ModRevision != theirRev {
		t.Fatalf("after the refused save app/config = %s, want theirs at revision %d", e2e.KVString(&got), theirRev)
	}

	// Take theirs: the pane shows it, and editing starts from it.
	p.click(".conflict button", "Use theirs")
	p.waitNoText(".conflict h3", "Conflict")
	// Still shown as YAML, the rendering chosen before.
	p.waitText(".key-pane .value", "replicas: 5")

	// A second conflict, resolved by saving over theirs.
	p.click(".key-pane button", "Edit")
	p.markLabels()
	mine = "{\n  \"replicas\": 4,\n  \"image\": \"web:2\"\n}"
	p.fillLabelled("Value", mine)
	theirRev = s.Put(t, "app/config", "{\"replicas\": 6}")
	p.click(".edit button", "Save")
	p.waitText(".conflict table.diff tr.ins", `"image": "web:2"`)
	p.click(".conflict button", "Save mine over theirs")
	p.waitText("#notice", "Saved app/config at revision")
	p.waitText(".key-pane .value", "replicas: 4")
	got := s.Get(t, "app/config")
	if e2e.ValueOf(&got) != mine || got.ModRevision <= theirRev {
		t.Errorf("after saving over theirs app/config = %s, want %q after revision %d", e2e.KVString(&got), mine, theirRev)
	}

	// Create and delete, each with its precondition.
	p.goTo("#/keys?f=app/&pane=new")
	p.markLabels()
	p.fillLabelled("Key", "app/config")
	p.fillLabelled("Value", "x")
	p.click(".new-key button", "Create")
	p.waitText(".new-key .problem", "exists already")
	p.fillLabelled("Key", "app/new")
	p.click(".new-key button", "Create")
	p.waitText(".key-pane h2", "app/new")
	p.waitText(".children a.key", "new")
	if kv := s.Get(t, "app/new"); e2e.ValueOf(&kv) != "x" || kv.Version != 1 {
		t.Errorf("after creating app/new = %s, want x at version 1", e2e.KVString(&kv))
	}
	p.click(".key-pane button", "Delete")
	p.confirm("Delete")
	p.waitText("#notice", "Deleted app/new")
	p.waitNoText(".children a.key", "new")
	s.Do(t, "GET", e2e.KeyPath("app/new"), nil).WantError(t, http.StatusNotFound, "key_not_found")
	if strings.Contains(p.text(".children"), "new") {
		t.Errorf("the list still shows app/new after its delete")
	}

	// A key and a value that are not UTF-8: shown escaped and as base64
	// and hex, edited as base64, deleted by their bytes.
	binKey := "bin/\xff\x01"
	s.Do(t, "PUT", e2e.KeyPath(binKey), []byte{0x00, 0xff, 0x10}).Want(t, http.StatusOK)
	p.goTo("#/keys?f=bin/")
	p.click(".children a.key", `\xff\x01`)
	p.waitText(".key-pane h2", `bin/\xff\x01`)
	p.waitText(`[role="tab"][aria-selected="true"]`, "Base64")
	p.waitText(".key-pane .value", "AP8Q")
	p.click(`[role="tab"]`, "Hex")
	p.waitText(".key-pane .value", "00 ff 10")
	p.click(".key-pane button", "Edit")
	p.markLabels()
	p.fillLabelled("Value", "AQID")
	p.waitText(".editor .check", "valid base64")
	p.forgetNotice()
	p.click(".edit button", "Save")
	p.waitText("#notice", `Saved bin/\xff\x01`)
	if kv := s.Get(t, binKey); e2e.ValueOf(&kv) != "\x01\x02\x03" {
		t.Errorf("after saving base64 AQID the key holds %q, want bytes 1 2 3", e2e.ValueOf(&kv))
	}
	p.click(".key-pane button", "Delete")
	p.confirm("Delete")
	p.waitText("#notice", `Deleted bin/\xff\x01`)
	s.Do(t, "GET", e2e.KeyPath(binKey), nil).WantError(t, http.StatusNotFound, "key_not_found")
}
