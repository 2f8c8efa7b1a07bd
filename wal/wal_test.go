package wal

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// collect opens the log at path and returns it with the payloads it
// replayed.
func collect(t *testing.T, path string) (*Log, [][]byte, error) {
	t.Helper()
	var got [][]byte
	l, err := Open(path, Options{}, func(p []byte) error {
		got = append(got, bytes.Clone(p))
		return nil
	})
	if err == nil {
		t.Cleanup(func() { l.Close() })
	}
	return l, got, err
}

// write appends and syncs each payload, then closes the log.
func write(t *testing.T, path string, payloads ...string) {
	t.Helper()
	l, _, err := collect(t, path)
	if err != nil {
		t.Fatalf("Open(%s) = %v", path, err)
	}
	for _, p := range payloads {
		if err := l.Append([]byte(p)); err != nil {
			t.Fatalf("Append(%q) = %v", p, err)
		}
		if err := l.Sync(); err != nil {
			t.Fatalf("Sync after %q = %v", p, err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
}

func strs(b [][]byte) []string {
	var s []string
	for _, p := range b {
		s = append(s, string(p))
	}
	return s
}

// TestReplay: records come back in order after a reopen, empty payloads
// included, and later appends follow them.
func TestReplay(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	write(t, path, "one", "", "three")
	write(t, path, "four")
	_, got, err := collect(t, path)
	if want := []string{"one", "", "three", "four"}; err != nil || !slices.Equal(strs(got), want) {
		t.Fatalf("Open replayed %q, %v; want %q, nil", strs(got), err, want)
	}
}

// TestTornTail: a last record cut short or damaged by a crash, which was
// never synced, is dropped, the file is cut back to the whole records,
// and appends after it replay correctly.
func TestTornTail(t *testing.T) {
	rec := func(p string) int64 { return int64(headerLen + len(p)) }
	whole := rec("alpha") + rec("beta")
	cases := []struct {
		name string
		tear func(t *testing.T, path string)
	}{
		{"header cut short", func(t *testing.T, path string) { truncate(t, path, whole+5) }},
		{"payload cut short", func(t *testing.T, path string) { truncate(t, path, whole+headerLen+2) }},
		{"payload never written", func(t *testing.T, path string) { zero(t, path, whole+headerLen, 6) }},
		{"header never written", func(t *testing.T, path string) { zero(t, path, whole, rec("gamma!")) }},
		{"zeros past the end", func(t *testing.T, path string) { appendZeros(t, path, 4096) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "log")
			write(t, path, "alpha", "beta", "gamma!")
			if tc.name == "zeros past the end" {
				whole += rec("gamma!")
				defer func() { whole -= rec("gamma!") }()
			}
			tc.tear(t, path)
			l, got, err := collect(t, path)
			want := []string{"alpha", "beta"}
			if tc.name == "zeros past the end" {
				want = append(want, "gamma!")
			}
			if err != nil || !slices.Equal(strs(got), want) {
				t.Fatalf("Open after the tear replayed %q, %v; want %q, nil", strs(got), err, want)
			}
			if fi, _ := os.Stat(path); fi.Size() != whole || l.Size() != whole {
				t.Errorf("after Open the file is %d bytes, Size() %d; want the %d of the whole records", fi.Size(), l.Size(), whole)
			}
			if err := l.Append([]byte("delta")); err != nil {
				t.Fatal(err)
			}
			if err := l.Sync(); err != nil {
				t.Fatal(err)
			}
			l.Close()
			_, got, err = collect(t, path)
			if want = append(want, "delta"); err != nil || !slices.Equal(strs(got), want) {
				t.Errorf("reopen replayed %q, %v; want %q, nil", strs(got), err, want)
			}
		})
	}
}

// TestCorrupt: damage before the last record is not taken for a torn
// write: Open fails with ErrCorrupt, replays nothing and leaves the file
// as it was.
func TestCorrupt(t *testing.T) {
	cases := []struct {
		name string
		at   int64 // offset of the byte flipped
	}{
		{"payload of the first record", headerLen + 1},
		{"length of the second record", headerLen + 3},
		{"checksum of the second record", headerLen + 3 + 9},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "log")
			write(t, path, "one", "two", "three")
			before, _ := os.ReadFile(path)
			damaged := bytes.Clone(before)
			damaged[tc.at] ^= 0x40
			if err := os.WriteFile(path, damaged, 0o600); err != nil {
				t.Fatal(err)
			}
			_, got, err := collect(t, path)
			if !errors.Is(err, ErrCorrupt) || len(got) > 1 {
				t.Errorf("Open of a log damaged at %d = %v after replaying %q; want ErrCorrupt", tc.at, err, strs(got))
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(after, damaged) {
				t.Errorf("Open changed the damaged file")
			}
		})
	}
}

// TestReset: after Reset nothing is replayed, and records appended after
// it are.
func TestReset(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	write(t, path, "old")
	l, _, err := collect(t, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Reset(); err != nil {
		t.Fatalf("Reset = %v", err)
	}
	if err := l.Append([]byte("new")); err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	l.Close()
	_, got, err := collect(t, path)
	if want := []string{"new"}; err != nil || !slices.Equal(strs(got), want) {
		t.Errorf("Open after Reset and an append replayed %q, %v; want %q", strs(got), err, want)
	}
}

// TestAppendUnsynced: a second Append before Sync is refused, so that at
// most the last record can ever be torn.
func TestAppendUnsynced(t *testing.T) {
	l, _, err := collect(t, filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Append([]byte("a")); err != nil {
		t.Fatal(err)
	}
	if err := l.Append([]byte("b")); !errors.Is(err, ErrUnsynced) {
		t.Errorf("Append before Sync = %v, want ErrUnsynced", err)
	}
}

// TestReplayError: an error from the replay function fails Open.
func TestReplayError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	write(t, path, "x")
	boom := fmt.Errorf("boom")
	if _, err := Open(path, Options{}, func([]byte) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("Open with a failing replay = %v, want %v", err, boom)
	}
}

func truncate(t *testing.T, path string, size int64) {
	t.Helper()
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

// zero overwrites n bytes at off with zeros, as blocks allocated but
// never written read after a crash.
func zero(t *testing.T, path string, off, n int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(make([]byte, n), off); err != nil {
		t.Fatal(err)
	}
}

func appendZeros(t *testing.T, path string, n int64) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	zero(t, path, fi.Size(), n)
}
