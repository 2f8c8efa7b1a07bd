package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/tests/e2e"
)

// TestCLIDataTransfer drives the commands over PUT ?ttl, PATCH,
// /v1/export, /v1/import and /v1/restore: put --ttl, patch, export,
// import and restore.
func TestCLIDataTransfer(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	u := s.URL

	// put --ttl: a key with a lease of its own.
	var put struct {
		Lease int64 `json:"lease"`
	}
	if err := json.Unmarshal([]byte(cliOK(t, u, "", "put", "session/42", "alice", "--ttl", "60", "-o", "json")), &put); err != nil || put.Lease == 0 {
		t.Fatalf("put --ttl 60 -o json: lease %d, %v; want the key's own lease", put.Lease, err)
	}
	if got := cliOK(t, u, "", "lease", "ttl", itoa(put.Lease), "--keys"); !strings.Contains(got, "of 60s\nsession/42\n") {
		t.Errorf("lease ttl of the key's lease = %q, want 60s and session/42", got)
	}

	// patch: a merge patch, a JSON Patch, a stale If-Match, a value that
	// is not JSON.
	rev := strings.TrimSpace(cliOK(t, u, "", "put", "config/app.json", `{"replicas":1,"debug":true}`, "-o", "value"))
	if got := cliOK(t, u, "", "patch", "config/app.json", `{"replicas":3,"debug":null}`, "-o", "value"); got != `{"replicas":3}`+"\n" {
		t.Errorf("patch (merge) = %q, want {\"replicas\":3}", got)
	}
	cliOK(t, u, `[{"op":"add","path":"/tags","value":["blue"]}]`, "patch", "config/app.json")
	if got := cliOK(t, u, "", "get", "config/app.json", "-o", "value"); got != `{"replicas":3,"tags":["blue"]}` {
		t.Errorf("after a JSON Patch from stdin, the value = %q", got)
	}
	cliFails(t, u, 1, "httpkv: precondition_failed: ", "patch", "config/app.json", `{"replicas":4}`, "--if-match", rev)
	cliOK(t, u, "", "put", "config/motd", "hello")
	cliFails(t, u, 1, "httpkv: patch_failed: ", "patch", "config/motd", `{"a":1}`)
	cliFails(t, u, 2, "--type must be merge or json", "patch", "config/motd", `{}`, "--type", "yaml")

	// export to a file, then import it back after changes.
	cliOK(t, u, "", "put", "config/db/url", "postgres://db:5432")
	before := strings.TrimSpace(cliOK(t, u, "", "status", "-o", "value"))
	file := filepath.Join(t.TempDir(), "config.ndjson")
	cliOK(t, u, "", "export", "config/", "--prefix", "--file", file)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var head struct {
		Header struct{ Revision int64 } `json:"header"`
		Count  int64                    `json:"count"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &head); err != nil || head.Count != 3 || len(lines) != 4 || itoa(head.Header.Revision) != before {
		t.Fatalf("export config/ --prefix wrote %q, want a header at %s with count 3, and 3 keys", b, before)
	}
	// To stdout, one key.
	if got := strings.Split(strings.TrimSpace(cliOK(t, u, "", "export", "config/db/url")), "\n"); len(got) != 2 || got[1] != lines[2] {
		t.Errorf("export config/db/url = %q, want a header and %s", got, lines[2])
	}

	cliOK(t, u, "", "put", "config/db/url", "changed")
	cliOK(t, u, "", "put", "config/extra", "x")
	cliOK(t, u, "", "del", "config/motd")
	dry := cliOK(t, u, "", "import", file, "config/", "--prefix", "--replace", "--dry-run")
	if !strings.Contains(dry, "would create 1, update 1, delete 1") {
		t.Errorf("import --dry-run = %q, want 1 created, 1 updated, 1 deleted", dry)
	}
	if got := cliOK(t, u, "", "get", "config/db/url", "-o", "value"); got != "changed" {
		t.Errorf("a dry run changed config/db/url to %q", got)
	}
	var imp struct {
		Created, Updated, Deleted, Unchanged int64
	}
	if err := json.Unmarshal([]byte(cliOK(t, u, "", "import", file, "config/", "--prefix", "--replace", "-o", "json")), &imp); err != nil ||
		imp.Created != 1 || imp.Updated != 1 || imp.Deleted != 1 || imp.Unchanged != 1 {
		t.Errorf("import --replace -o json = %+v, %v; want 1 created, updated, deleted and unchanged", imp, err)
	}
	if got := cliOK(t, u, "", "get", "config/", "--prefix", "--keys-only"); got != "config/app.json\nconfig/db/url\nconfig/motd\n" {
		t.Errorf("after import --replace, config/ = %q, want what was exported", got)
	}
	// From stdin; a key outside the scope changes nothing.
	r := runCLI(t, u, string(b), "import", "-", "other/", "--prefix")
	if r.status != 1 || !strings.Contains(r.stderr, "httpkv: invalid_argument: ") {
		t.Errorf("import of keys outside the scope exited %d with %q, want 1 and invalid_argument", r.status, r.stderr)
	}

	// restore: config/db/url as it was at the export.
	cliOK(t, u, "", "put", "config/db/url", "again")
	if got := cliOK(t, u, "", "restore", "config/db/url", "--rev", before, "--dry-run"); !strings.Contains(got, "would create 0, update 1, delete 0") {
		t.Errorf("restore --dry-run = %q", got)
	}
	cliOK(t, u, "", "restore", "config/", "--prefix", "--rev", before)
	if got := cliOK(t, u, "", "get", "config/db/url", "-o", "value"); got != "postgres://db:5432" {
		t.Errorf("after restore --rev %s, config/db/url = %q", before, got)
	}
	cliOK(t, u, "", "compact", strings.TrimSpace(cliOK(t, u, "", "status", "-o", "value")))
	cliFails(t, u, 1, "httpkv: compacted: ", "restore", "config/", "--prefix", "--rev", before)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestCLIExportProgress: on a terminal, export draws its progress on
// stderr, and what it writes to stdout is the export alone.
func TestCLIExportProgress(t *testing.T) {
	t.Parallel()
	script, err := exec.LookPath("script")
	e2e.NeedPrograms(t, "the test runs export on a terminal made by script (util-linux)", err)
	s := e2e.StartServer(t)
	c := e2e.NewKVClient(t, s)
	e2e.PutEvents(t, c, "p/", 0, 300)
	dir := t.TempDir()
	out := filepath.Join(dir, "out.ndjson")
	// script runs the command with a terminal as its stdin and stderr;
	// stdout goes to a file.
	cmd := exec.Command(script, "-qec", fmt.Sprintf("%q export p/ --prefix > %q", e2e.ServerBinary(t), out), "/dev/null")
	cmd.Env = cliEnv(s.URL)
	terminal, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("export on a terminal: %v\n%s", err, terminal)
	}
	if !strings.Contains(string(terminal), "export") {
		t.Errorf("export drew no progress on the terminal: %q", terminal)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 301 {
		t.Fatalf("export wrote %d lines to stdout, want a header and 300 keys", len(lines))
	}
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Fatalf("export wrote %q to stdout, not JSON", l)
		}
	}
}
