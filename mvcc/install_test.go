package mvcc

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

// TestInstallFile writes a file whole, refuses to replace one, and leaves
// nothing behind when its reader fails.
func TestInstallFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "db")
	if err := InstallFile(path, strings.NewReader("data")); err != nil {
		t.Fatalf("InstallFile() = %v, want nil", err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "data" {
		t.Fatalf("installed file = %q, %v, want %q", b, err, "data")
	}
	if err := InstallFile(path, strings.NewReader("other")); !errors.Is(err, os.ErrExist) {
		t.Fatalf("InstallFile() over an existing file = %v, want os.ErrExist", err)
	}
	failing := filepath.Join(dir, "failing")
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("partial"), iotest.ErrReader(boom))
	if err := InstallFile(failing, r); !errors.Is(err, boom) {
		t.Fatalf("InstallFile() with a failing reader = %v, want its error", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "db" {
		t.Fatalf("after a failed InstallFile the directory holds %v, want db alone", entries)
	}
}
