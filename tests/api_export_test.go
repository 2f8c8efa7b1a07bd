package tests

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/httpkv/httpkv/tests/e2e"
)

// exportKeys is how many keys TestExportImportRoundTrip moves: 20,000
// (2,000 over etcd, whose test clusters are slower to fill), or
// HTTPKV_EXPORT_KEYS.
func exportKeys(tb testing.TB) int {
	if v := os.Getenv("HTTPKV_EXPORT_KEYS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			tb.Fatalf("HTTPKV_EXPORT_KEYS=%q: want a positive number", v)
		}
		return n
	}
	if e2e.OnEtcd(tb) {
		return 2000
	}
	return 20000
}

// importBody is n keys k/0000000.. with values of about 24 bytes, as
// NDJSON.
func importBody(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, `{"key":"k/%07d","value":"value of key number %07d"}`+"\n", i, i)
	}
	return b.Bytes()
}

// TestExportImportRoundTrip fills a store with one import, exports it
// while watching the server's memory, and imports the file into an empty
// store: the embedded store takes it as one revision, and both hold the
// same keys and values.
func TestExportImportRoundTrip(t *testing.T) {
	n := exportKeys(t)
	flags := []string{"--max-import-bytes=536870912", fmt.Sprintf("--max-txn-ops=%d", n+10)}
	src := e2e.StartServer(t, flags...)
	body := importBody(n)
	start, cpu := time.Now(), src.CPU(t)
	a := src.ImportNDJSON(t, "", body, 200)
	t.Logf("filled the store with %d keys in one import of %d MiB in %v (the server's CPU time: %v)",
		n, len(body)>>20, time.Since(start).Round(time.Millisecond), src.CPU(t)-cpu)
	if a.Created != int64(n) || len(a.Keys.Created) != 1000 {
		t.Fatalf("filling the store: created %d with %d listed, want %d with 1000", a.Created, len(a.Keys.Created), n)
	}
	if !e2e.OnEtcd(t) && a.Header.Revision != 2 {
		t.Fatalf("an import of %d keys into an empty store is at revision %d, want 2: one revision", n, a.Header.Revision)
	}

	dir := t.TempDir()
	mem := watchMemory(t, src)
	start, cpu = time.Now(), src.CPU(t)
	rev, count, lines, hash := src.ExportTo(t, "", filepath.Join(dir, "export.ndjson"))
	took := time.Since(start)
	before, peak := mem.stop()
	anon, file := peak.Anon-before.Anon, peak.File-before.File
	t.Logf("exported %d keys in %v (the server's CPU time: %v); the server's anonymous memory (its heap) peaked %.1f MiB above where it was (%.1f MiB), its resident pages of files (the store's mapped file) %.1f MiB above (%.1f MiB)",
		n, took.Round(time.Millisecond), src.CPU(t)-cpu, float64(anon)/(1<<20), float64(before.Anon)/(1<<20), float64(file)/(1<<20), float64(before.File)/(1<<20))
	if rev != a.Header.Revision || count != int64(n) || lines != n+1 {
		t.Fatalf("the export: revision %d, count %d, %d lines; want %d, %d, %d", rev, count, lines, a.Header.Revision, n, n+1)
	}
	if anon > 64<<20 {
		t.Errorf("the server's memory grew %d MiB while exporting %d keys, want under 64 MiB", anon>>20, n)
	}

	dst := e2e.StartServer(t, flags...)
	exported, err := os.ReadFile(filepath.Join(dir, "export.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	mem = watchMemory(t, dst)
	start, cpu = time.Now(), dst.CPU(t)
	b := dst.ImportNDJSON(t, "", exported, 200)
	took = time.Since(start)
	before, peak = mem.stop()
	t.Logf("imported the %d MiB file in %v (the server's CPU time: %v); the server's anonymous memory peaked %.1f MiB above where it was (%.1f MiB)",
		len(exported)>>20, took.Round(time.Millisecond), dst.CPU(t)-cpu, float64(peak.Anon-before.Anon)/(1<<20), float64(before.Anon)/(1<<20))
	if b.Created != int64(n) || (!e2e.OnEtcd(t) && b.Header.Revision != 2) {
		t.Fatalf("the re-import: created %d at revision %d, want %d at revision 2", b.Created, b.Header.Revision, n)
	}
	_, _, lines2, hash2 := dst.ExportTo(t, "", filepath.Join(dir, "again.ndjson"))
	if lines2 != lines || hash2 != hash {
		t.Fatalf("the store the export went into holds %d lines hashing %s, want %d hashing %s", lines2, hash2, lines, hash)
	}
}

// memoryWatch samples a server's resident memory until stopped.
type memoryWatch struct {
	first e2e.ResidentMemory
	peak  e2e.ResidentMemory
	done  chan struct{}
	ended chan struct{}
}

// watchMemory samples s's resident memory every 10ms until stop, which
// returns the first sample and the peak of each kind.
func watchMemory(tb testing.TB, s *e2e.Server) *memoryWatch {
	tb.Helper()
	w := &memoryWatch{first: s.Memory(tb), done: make(chan struct{}), ended: make(chan struct{})}
	w.peak = w.first
	pid := s.Cmd.Process.Pid
	go func() {
		defer close(w.ended)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-w.done:
				return
			case <-tick.C:
			}
			if m, err := e2e.ReadMemory(pid); err == nil {
				w.peak.Anon, w.peak.File = max(w.peak.Anon, m.Anon), max(w.peak.File, m.File)
			}
		}
	}()
	return w
}

func (w *memoryWatch) stop() (first, peak e2e.ResidentMemory) {
	close(w.done)
	<-w.ended
	return w.first, w.peak
}
