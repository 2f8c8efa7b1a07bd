package snapshot

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/mvcc/mvcctest"
)

// TestRestoreRefusesTamperedStore: a snapshot whose store was edited and
// its hash recomputed (a record at a revision past int64 or past 2^53-1,
// create_revision above mod_revision, version 0, a lease of 2^62, a key
// on a lease that does not exist, a compaction ahead of the store, a
// meta page of another page size, pages that name another or lead back)
// verifies, but Inspect, Open and Restore refuse it with ErrCorrupt and
// restore nothing: no data directory is made.
func TestRestoreRefusesTamperedStore(t *testing.T) {
	s := newSource(t)
	for _, tc := range mvcctest.Tamperings() {
		t.Run(tc.Name, func(t *testing.T) {
			dir := t.TempDir()
			db, file := filepath.Join(dir, "db"), filepath.Join(dir, "tampered.snapshot")
			mvcctest.Unseal(t, s.file, db)
			tc.Edit(t, db)
			mvcctest.Seal(t, db, file)
			if _, _, err := Verify(file); err != nil {
				t.Fatalf("Verify(the tampered snapshot) = %v, want its recomputed hash to verify", err)
			}
			corrupt := func(op string, err error) {
				t.Helper()
				if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "corrupt") {
					t.Fatalf("%s(a snapshot with %s) = %v, want ErrCorrupt", op, tc.Name, err)
				}
			}
			_, err := Inspect(file)
			corrupt("Inspect", err)
			c, err := Open(file)
			if err == nil {
				c.Close()
			}
			corrupt("Open", err)
			data := filepath.Join(dir, "restored", "data")
			_, err = Restore(file, data, "httpkv.db")
			corrupt("Restore", err)
			if _, err := os.Stat(filepath.Dir(data)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("after a refused Restore, its directory: %v, want none made", err)
			}
		})
	}
}
