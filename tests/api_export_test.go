package tests

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
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
	if onEtcd(tb) {
		return 2000
	}
	return 20000
}

// exportLine is the key and value of one line of an export.
type exportLine struct {
	Key, KeyBase64, Value, ValueBase64 string
	Header                             *struct{ Revision int64 }
	Count                              int64
	Error                              *struct{ Code, Message string }
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

// importNDJSON posts body to /v1/import?query and decodes the answer.
func (s *server) importNDJSON(tb testing.TB, query string, body []byte, want int, header ...string) rewriteAnswer {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	r, err := s.sendWith(s.streams, ctx, "POST", "/v1/import"+query, body, append([]string{"Content-Type", "application/x-ndjson"}, header...)...)
	if err != nil {
		tb.Fatal(err)
	}
	checkReply(tb, r)
	var a rewriteAnswer
	r.ok(tb, want, &a)
	return a
}

// rewriteAnswer is the answer of an import or a restore.
type rewriteAnswer struct {
	Header                               struct{ Revision int64 }
	Created, Updated, Deleted, Unchanged int64
	Keys                                 struct{ Created, Updated, Deleted []string }
}

// exportTo streams GET /v1/export?query into a file, and returns its
// header and a hash of its key and value lines.
func (s *server) exportTo(tb testing.TB, query, file string) (rev, count int64, lines int, hash string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", s.URL+"/v1/export"+query, nil)
	if err != nil {
		tb.Fatal(err)
	}
	resp, err := s.streams.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/x-ndjson" {
		b, _ := io.ReadAll(resp.Body)
		tb.Fatalf("GET /v1/export%s = %d %s %s", query, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	f, err := os.Create(file)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	sc := bufio.NewScanner(io.TeeReader(resp.Body, f))
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		var l exportLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			tb.Fatalf("export line %d %q: %v", lines+1, sc.Text(), err)
		}
		switch {
		case l.Error != nil:
			tb.Fatalf("the export ended with an error: %+v", l.Error)
		case lines == 0:
			if l.Header == nil {
				tb.Fatalf("the export's first line %q has no header", sc.Text())
			}
			rev, count = l.Header.Revision, l.Count
		default:
			if lines < 100 {
				checkKeyValueLine(tb, sc.Bytes())
			}
			fmt.Fprintf(h, "%q %q %q %q\n", l.Key, l.KeyBase64, l.Value, l.ValueBase64)
		}
		lines++
	}
	if err := sc.Err(); err != nil {
		tb.Fatalf("reading the export: %v", err)
	}
	return rev, count, lines, fmt.Sprintf("%x", h.Sum(nil))
}

// TestExportImportRoundTrip fills a store with one import, exports it
// while watching the server's memory, and imports the file into an empty
// store: the embedded store takes it as one revision, and both hold the
// same keys and values.
func TestExportImportRoundTrip(t *testing.T) {
	n := exportKeys(t)
	flags := []string{"--max-import-bytes=536870912", fmt.Sprintf("--max-txn-ops=%d", n+10)}
	src := startServer(t, flags...)
	body := importBody(n)
	start, cpu := time.Now(), src.cpu(t)
	a := src.importNDJSON(t, "", body, 200)
	t.Logf("filled the store with %d keys in one import of %d MiB in %v (the server's CPU time: %v)",
		n, len(body)>>20, time.Since(start).Round(time.Millisecond), src.cpu(t)-cpu)
	if a.Created != int64(n) || len(a.Keys.Created) != 1000 {
		t.Fatalf("filling the store: created %d with %d listed, want %d with 1000", a.Created, len(a.Keys.Created), n)
	}
	if !onEtcd(t) && a.Header.Revision != 2 {
		t.Fatalf("an import of %d keys into an empty store is at revision %d, want 2: one revision", n, a.Header.Revision)
	}

	dir := t.TempDir()
	mem := watchMemory(t, src)
	start, cpu = time.Now(), src.cpu(t)
	rev, count, lines, hash := src.exportTo(t, "", filepath.Join(dir, "export.ndjson"))
	took := time.Since(start)
	before, peak := mem.stop()
	anon, file := peak.anon-before.anon, peak.file-before.file
	t.Logf("exported %d keys in %v (the server's CPU time: %v); the server's anonymous memory (its heap) peaked %.1f MiB above where it was (%.1f MiB), its resident pages of files (the store's mapped file) %.1f MiB above (%.1f MiB)",
		n, took.Round(time.Millisecond), src.cpu(t)-cpu, float64(anon)/(1<<20), float64(before.anon)/(1<<20), float64(file)/(1<<20), float64(before.file)/(1<<20))
	if rev != a.Header.Revision || count != int64(n) || lines != n+1 {
		t.Fatalf("the export: revision %d, count %d, %d lines; want %d, %d, %d", rev, count, lines, a.Header.Revision, n, n+1)
	}
	if anon > 64<<20 {
		t.Errorf("the server's memory grew %d MiB while exporting %d keys, want under 64 MiB", anon>>20, n)
	}

	dst := startServer(t, flags...)
	exported, err := os.ReadFile(filepath.Join(dir, "export.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	mem = watchMemory(t, dst)
	start, cpu = time.Now(), dst.cpu(t)
	b := dst.importNDJSON(t, "", exported, 200)
	took = time.Since(start)
	before, peak = mem.stop()
	t.Logf("imported the %d MiB file in %v (the server's CPU time: %v); the server's anonymous memory peaked %.1f MiB above where it was (%.1f MiB)",
		len(exported)>>20, took.Round(time.Millisecond), dst.cpu(t)-cpu, float64(peak.anon-before.anon)/(1<<20), float64(before.anon)/(1<<20))
	if b.Created != int64(n) || (!onEtcd(t) && b.Header.Revision != 2) {
		t.Fatalf("the re-import: created %d at revision %d, want %d at revision 2", b.Created, b.Header.Revision, n)
	}
	_, _, lines2, hash2 := dst.exportTo(t, "", filepath.Join(dir, "again.ndjson"))
	if lines2 != lines || hash2 != hash {
		t.Fatalf("the store the export went into holds %d lines hashing %s, want %d hashing %s", lines2, hash2, lines, hash)
	}
}

// residentMemory is a process's resident memory: anonymous (its heap
// and stacks), and pages of files it maps.
type residentMemory struct{ anon, file int64 }

// memoryWatch samples a server's resident memory until stopped.
type memoryWatch struct {
	first residentMemory
	peak  residentMemory
	done  chan struct{}
	ended chan struct{}
}

// watchMemory samples s's resident memory every 10ms until stop, which
// returns the first sample and the peak of each kind.
func watchMemory(tb testing.TB, s *server) *memoryWatch {
	tb.Helper()
	w := &memoryWatch{first: s.memory(tb), done: make(chan struct{}), ended: make(chan struct{})}
	w.peak = w.first
	pid := s.cmd.Process.Pid
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
			if m, err := readMemory(pid); err == nil {
				w.peak.anon, w.peak.file = max(w.peak.anon, m.anon), max(w.peak.file, m.file)
			}
		}
	}()
	return w
}

func (w *memoryWatch) stop() (first, peak residentMemory) {
	close(w.done)
	<-w.ended
	return w.first, w.peak
}

// memory returns the server process's resident memory.
func (s *server) memory(tb testing.TB) residentMemory {
	tb.Helper()
	m, err := readMemory(s.cmd.Process.Pid)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

func readMemory(pid int) (residentMemory, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return residentMemory{}, err
	}
	var m residentMemory
	for _, line := range strings.Split(string(b), "\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || (name != "RssAnon" && name != "RssFile") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return m, fmt.Errorf("%s %q: %w", name, rest, err)
		}
		if name == "RssAnon" {
			m.anon = kb << 10
		} else {
			m.file = kb << 10
		}
	}
	return m, nil
}

// checkKeyValueLine fails unless a line of an export is a KeyValue of
// the OpenAPI document, with no key-like field beside its twin.
func checkKeyValueLine(tb testing.TB, line []byte) {
	tb.Helper()
	doc, _, err := loadAPIDoc()
	if err == nil {
		err = matchSchema(doc, "KeyValue", line)
	}
	if err == nil {
		err = checkTwins(line)
	}
	if err != nil {
		tb.Fatalf("export line %s: %v", line, err)
	}
}

// cpu returns the CPU time the server process has used, user and system.
func (s *server) cpu(tb testing.TB) time.Duration {
	tb.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		tb.Fatal(err)
	}
	// The fields after the command's name, which is in parentheses:
	// utime and stime are the 12th and 13th, in clock ticks (100 a
	// second on Linux).
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		tb.Fatalf("/proc/%d/stat: %q", s.cmd.Process.Pid, b)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
