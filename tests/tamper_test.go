package tests

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/mvcc/mvcctest"
	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// TestTamperedStoreRefused edits a stopped server's data file, and a
// snapshot of it (its SHA-256 recomputed), in every way mvcctest knows
// (a record at a revision past int64 or past 2^53-1, create_revision
// above mod_revision, version 0, a lease of 2^62, a key on a lease that
// does not exist, a compaction at 2^40, a meta page of 512-byte pages, a
// page that names another or leads back to itself, ...). `httpkv
// snapshot status` and `restore` refuse the snapshot saying "corrupt",
// restore makes no data directory, and the server refuses to start on
// the file, saying "corrupt", and leaves it as it was: none of them
// panics.
func TestTamperedStoreRefused(t *testing.T) {
	t.Parallel()
	e2e.EmbeddedOnly(t, "it edits the embedded store's file, which a gateway to etcd has none of")
	s := e2e.StartServer(t)
	var g client.LeaseResponse
	s.Do(t, "POST", "/v1/leases", []byte(`{"ttl":600}`)).Ok(t, http.StatusCreated, &g)
	for i := range 200 {
		s.Put(t, fmt.Sprintf("k%03d", i), strings.Repeat("v", 1024))
	}
	s.Do(t, "PUT", fmt.Sprintf("%s?lease=%d", e2e.KeyPath("leased"), g.Id), []byte("x")).Want(t, http.StatusOK)
	s.Stop()
	good, err := os.ReadFile(filepath.Join(s.DataDir, "httpkv.db"))
	if err != nil {
		t.Fatal(err)
	}
	refused := func(t *testing.T, what, stderr string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(stderr, "corrupt") || strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine ") {
			t.Fatalf("%s: %v; stderr:\n%s\nwant it refused, saying corrupt, without a panic", what, err, stderr)
		}
	}
	for _, tc := range mvcctest.Tamperings() {
		t.Run(tc.Name, func(t *testing.T) {
			dir := t.TempDir()
			data := filepath.Join(dir, "data")
			if err := os.Mkdir(data, 0o700); err != nil {
				t.Fatal(err)
			}
			db := filepath.Join(data, "httpkv.db")
			if err := os.WriteFile(db, good, 0o600); err != nil {
				t.Fatal(err)
			}
			tc.Edit(t, db)
			file := filepath.Join(dir, "tampered.snapshot")
			mvcctest.Seal(t, db, file)

			_, stderr, err := e2e.RunHTTPKV(t, nil, "snapshot", "status", file)
			refused(t, "httpkv snapshot status", stderr, err)
			restored := filepath.Join(dir, "restored")
			_, stderr, err = e2e.RunHTTPKV(t, nil, "snapshot", "restore", "--data-dir", restored, file)
			refused(t, "httpkv snapshot restore", stderr, err)
			if _, err := os.Stat(restored); !os.IsNotExist(err) {
				t.Fatalf("a refused restore left its data directory: %v", err)
			}

			before := fileState(t, db)
			code, stderr := runToExit(t, data, e2e.ServerStartTimeout)
			refused(t, "httpkv on the data directory", stderr, fmt.Errorf("exit code %d", code))
			if code == 0 {
				t.Fatalf("httpkv on a tampered store exited 0; stderr:\n%s", stderr)
			}
			if after := fileState(t, db); after != before {
				t.Fatalf("the refused store changed: %s, was %s", after, before)
			}
		})
	}
}
