package mvcc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/kv"
)

// writtenStore returns the path of a closed store with some history.
func writtenStore(tb testing.TB) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "db")
	s, err := Open(path, nil, nil, Options{NoFsync: true})
	if err != nil {
		tb.Fatal(err)
	}
	for i := range 200 {
		if _, err := s.Put(kv.PutRequest{Key: fmt.Appendf(nil, "k%03d", i), Value: []byte(strings.Repeat("v", 2048))}); err != nil {
			tb.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}

// metaPagesSize returns the size the file's meta page says it has: bbolt grows
// the file ahead of that, so only a cut below it loses pages.
func metaPagesSize(tb testing.TB, path string) int64 {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		tb.Fatal(err)
	}
	m, err := readMeta(f, st.Size())
	if err != nil {
		tb.Fatal(err)
	}
	return int64(m.pages) * int64(m.pageSize)
}

func TestOpenRefusesBadFile(t *testing.T) {
	cases := []struct {
		name   string
		damage func(tb testing.TB, path string, size int64)
		want   string // a regexp the error matches
	}{
		{"truncated", func(tb testing.TB, path string, size int64) { truncate(tb, path, metaPagesSize(tb, path)/2) },
			`truncated: \d+ bytes, meta says \d+`},
		{"cut inside the first page", func(tb testing.TB, path string, size int64) { truncate(tb, path, 40) },
			`too short for a meta page`},
		{"not a bbolt file", func(tb testing.TB, path string, size int64) {
			if err := os.WriteFile(path, []byte(strings.Repeat("not bbolt ", 2000)), 0o600); err != nil {
				tb.Fatal(err)
			}
		}, `no valid meta page .*not a bbolt file`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := writtenStore(t)
			st, _ := os.Stat(path)
			tc.damage(t, path, st.Size())
			before, _ := os.ReadFile(path)
			_, err := Open(path, nil, nil, Options{NoFsync: true})
			if !errors.Is(err, ErrCorrupt) || !regexp.MustCompile(tc.want).MatchString(err.Error()) {
				t.Fatalf("Open(%s) = %v, want ErrCorrupt matching %q", tc.name, err, tc.want)
			}
			if after, _ := os.ReadFile(path); string(after) != string(before) {
				t.Fatalf("Open changed the refused file")
			}
		})
	}
}

// TestOpenFirstMetaDamaged damages meta page 0, which bbolt survives by
// using page 1: so does the check.
func TestOpenFirstMetaDamaged(t *testing.T) {
	path := writtenStore(t)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0xff, 0xff}, pageHeaderSize+metaSummed-2); err != nil {
		t.Fatal(err)
	}
	f.Close()
	s, err := Open(path, nil, nil, Options{NoFsync: true})
	if err != nil {
		t.Fatalf("Open with meta page 0 damaged = %v, want bbolt's fallback to page 1", err)
	}
	s.Close()
}

func TestOpenLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	s, err := Open(path, nil, nil, Options{NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = Open(path, nil, nil, Options{NoFsync: true})
	want := fmt.Sprintf("(pid %d)", os.Getpid())
	if runtime.GOOS != "linux" {
		want = "" // the holder is found through /proc/locks
	}
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), want) {
		t.Fatalf("a second Open of %s = %v, want ErrLocked naming %s", path, err, want)
	}
}

func truncate(tb testing.TB, path string, size int64) {
	tb.Helper()
	if err := os.Truncate(path, size); err != nil {
		tb.Fatal(err)
	}
}
