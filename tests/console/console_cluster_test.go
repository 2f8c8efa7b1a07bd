package console

import (
	"github.com/httpkv/httpkv/tests/e2e"

	"bytes"
	"fmt"
	"net/http"
	"testing"
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

	p := openConsole(t, s, "#/cluster", 1280, 800)
	p.waitText(".cluster .alarms li", "NOSPACE")
	p.waitText(".cluster dl", "Backend size")
	before := s.Status(t)
	p.waitText(".cluster dl", fmt.Sprintf("%d", before.Revision))

	// Free the space: delete the folder, compact, defragment.
	p.goTo("#/keys?f=fill/")
	p.waitText(".children a.key", "000")
	p.click(".browse .toolbar button", "Delete folder")
	p.confirm("Delete")
	p.waitText("#notice", "keys at revision")
	del := s.Status(t).Revision

	p.goTo("#/cluster")
	p.markLabels()
	p.fillLabelled("Compact up to revision", fmt.Sprint(del))
	p.click(".compact button", "Compact")
	p.waitText("dialog[open] h2", fmt.Sprintf("Compact the history up to revision %d?", del))
	p.confirm("Compact")
	p.waitText("#notice", fmt.Sprintf("Compacted the history up to revision %d.", del))
	p.waitText(".cluster dl", "Compact revision")
	if st := s.Status(t); st.CompactRevision != del {
		t.Errorf("after compacting from the page the compact revision is %d, want %d", st.CompactRevision, del)
	}
	p.click(".cluster button", "Defragment")
	p.confirm("Defragment")
	p.waitText("#notice", "Defragmented: the backend is now")

	p.click(".cluster .alarms button", "Disarm alarms")
	p.waitText("#notice", "Alarms disarmed.")
	p.waitText(".cluster .alarms", "No alarms.")
	if st := s.Status(t); len(st.Alarms) != 0 {
		t.Errorf("after disarming from the page the alarms are %q, want none", st.Alarms)
	}
	s.Put(t, "after", "writes work again")

	// Watchers are counted by group: this page's stream is one.
	p.goTo("#/keys?f=fill/")
	p.wait("live", `document.getElementById("live").dataset.state === "live"`)
	if st := s.Status(t); st.Watchers.Synced+st.Watchers.Unsynced < 1 {
		t.Errorf("with the console following a folder, status is %+v, want at least one watcher", st.Watchers)
	}
}
