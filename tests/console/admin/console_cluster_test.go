package admin

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"

	"github.com/httpkv/httpkv/tests/e2e"
)

// TestConsoleClusterNoSpace runs out of space, then recovers from the
// page as an operator would: the cluster view shows the NOSPACE alarm;
// the keys that filled the backend are deleted as a folder; compaction
// (confirmed by typing its revision), defragmentation and disarming the
// alarm follow, after which writes work again.
func TestConsoleClusterNoSpace(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t, "--quota-backend-bytes=150000")
	value := bytes.Repeat([]byte("v"), 4000)
	for i := 0; ; i++ {
		if i == 200 {
			t.Fatalf("200 puts of %d bytes did not exceed a quota of 150000 bytes", len(value))
		}
		r := s.Do(t, "PUT", e2e.KeyPath(fmt.Sprintf("fill/%03d", i)), value)
		if r.Status == http.StatusInsufficientStorage {
			break
		}
		r.Want(t, http.StatusOK)
	}

	p := e2e.OpenConsole(t, s, "#/cluster", 1280, 800)
	p.WaitText(".cluster .alarms li", "NOSPACE")
	p.WaitText(".cluster dl", "Backend size")
	before := s.Status(t)
	p.WaitText(".cluster dl", fmt.Sprintf("%d", before.Revision))

	// Free the space: delete the folder, compact, defragment.
	p.GoTo("#/keys?f=fill/")
	p.WaitText(".children a.key", "000")
	p.Click(".browse .toolbar button", "Delete folder")
	p.Confirm("Delete")
	p.WaitText("#notice", "keys at revision")
	del := s.Status(t).Revision

	p.GoTo("#/cluster")
	p.MarkLabels()
	p.FillLabelled("Compact up to revision", fmt.Sprint(del))
	p.Click(".compact button", "Compact")
	p.WaitText("dialog[open] h2", fmt.Sprintf("Compact the history up to revision %d?", del))
	p.Confirm("Compact")
	p.WaitText("#notice", fmt.Sprintf("Compacted the history up to revision %d.", del))
	p.WaitText(".cluster dl", "Compact revision")
	if st := s.Status(t); st.CompactRevision != del {
		t.Errorf("after compacting from the page the compact revision is %d, want %d", st.CompactRevision, del)
	}
	p.Click(".cluster button", "Defragment")
	p.Confirm("Defragment")
	p.WaitText("#notice", "Defragmented: the backend is now")

	p.Click(".cluster .alarms button", "Disarm alarms")
	p.WaitText("#notice", "Alarms disarmed.")
	p.WaitText(".cluster .alarms", "No alarms.")
	if st := s.Status(t); len(st.Alarms) != 0 {
		t.Errorf("after disarming from the page the alarms are %q, want none", st.Alarms)
	}
	s.Put(t, "after", "writes work again")

	// Watchers are counted by group: this page's stream is one.
	p.GoTo("#/keys?f=fill/")
	p.Wait("live", `document.getElementById("live").dataset.state === "live"`)
	if st := s.Status(t); st.Watchers.Synced+st.Watchers.Unsynced < 1 {
		t.Errorf("with the console following a folder, status is %+v, want at least one watcher", st.Watchers)
	}
}
