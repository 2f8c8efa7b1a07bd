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

// TestInstallFile writes a file whole, replaces one, and leaves nothing
// behind, and the old file in place, when its reader or its check fails.
func TestInstallFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "db")
	want := func(content string) {
		t.Helper()
		if b, err := os.ReadFile(path); err != nil || string(b) != content {
			t.Fatalf("installed file = %q, %v, want %q", b, err, content)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Fatalf("the directory holds %d entries, want the installed file alone", len(entries))
		}
	}
	var checked string
	err := InstallFile(path, strings.NewReader("data"), func(tmp string) error {
		b, err := os.ReadFile(tmp)
		checked = string(b)
		return err
	})
	if err != nil || checked != "data" {
		t.Fatalf("InstallFile() = %v with %q checked, want nil with %q", err, checked, "data")
	}
	want("data")
	if err := InstallFile(path, strings.NewReader("newer"), nil); err != nil {
		t.Fatalf("InstallFile() over a file = %v, want nil", err)
	}
	want("newer")

	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("partial"), iotest.ErrReader(boom))
	if err := InstallFile(path, r, nil); !errors.Is(err, boom) {
		t.Fatalf("InstallFile() with a failing reader = %v, want its error", err)
	}
	want("newer")
	refuse := func(string) error { return boom }
	if err := InstallFile(path, strings.NewReader("bad"), refuse); !errors.Is(err, boom) {
		t.Fatalf("InstallFile() with a failing check = %v, want its error", err)
	}
	want("newer")
}
