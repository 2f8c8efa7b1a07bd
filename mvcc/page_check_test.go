package mvcc

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// boltFile writes a bbolt file of every shape bbolt makes: branch pages
// several levels deep, values spilling onto overflow pages, buckets
// nested in buckets, inline buckets, free pages, and (unless noFreelist)
// a written freelist.
func boltFile(tb testing.TB, noFreelist bool) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "bolt")
	db, err := bolt.Open(path, 0o600, &bolt.Options{NoFreelistSync: noFreelist, NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		top, err := tx.CreateBucket([]byte("top"))
		if err != nil {
			return err
		}
		for i := range 5000 {
			if err := top.Put(fmt.Appendf(nil, "key-%05d", i), bytes.Repeat([]byte{'v'}, 100)); err != nil {
				return err
			}
		}
		if err := top.Put([]byte("large"), bytes.Repeat([]byte{'L'}, 64<<10)); err != nil {
			return err
		}
		nested, err := top.CreateBucket([]byte("nested"))
		if err != nil {
			return err
		}
		for i := range 300 {
			if err := nested.Put(fmt.Appendf(nil, "n-%03d", i), bytes.Repeat([]byte{'n'}, 50)); err != nil {
				return err
			}
		}
		inline, err := nested.CreateBucket([]byte("inline"))
		if err != nil {
			return err
		}
		if err := inline.Put([]byte("small"), []byte("x")); err != nil {
			return err
		}
		_, err = tx.CreateBucket([]byte("empty"))
		return err
	})
	if err == nil {
		err = db.Update(func(tx *bolt.Tx) error {
			top := tx.Bucket([]byte("top"))
			for i := 0; i < 5000; i += 3 {
				if err := top.Delete(fmt.Appendf(nil, "key-%05d", i)); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err != nil {
		tb.Fatal(err)
	}
	if err := db.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}

// TestCheckPagesAcceptsBboltFiles: every page bbolt writes passes
// checkPages, with a freelist written or not.
func TestCheckPagesAcceptsBboltFiles(t *testing.T) {
	for _, noFreelist := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoFreelistSync=%v", noFreelist), func(t *testing.T) {
			path := boltFile(t, noFreelist)
			if err := checkFile(path); err != nil {
				t.Fatalf("checkFile(a file bbolt wrote) = %v, want nil", err)
			}
			if err := CheckFile(path); err != nil {
				t.Fatalf("CheckFile(a file bbolt wrote) = %v, want nil", err)
			}
		})
	}
}

// TestCheckPagesRefusesFreelist: a written freelist that frees a meta
// page, which bbolt would then hand out and overwrite, is refused.
func TestCheckPagesRefusesFreelist(t *testing.T) {
	path := boltFile(t, false)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	m, err := readMeta(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	if m.freelist == noFreelist {
		t.Fatal("bbolt wrote no freelist")
	}
	page := make([]byte, m.pageSize)
	off := int64(m.freelist) * int64(m.pageSize)
	if _, err := f.ReadAt(page, off); err != nil {
		t.Fatal(err)
	}
	count, at := binary.NativeEndian.Uint16(page[10:]), pageHeaderSize
	if count == freelistCountOverflow {
		at += 8
	}
	if count == 0 {
		t.Fatal("bbolt's freelist frees nothing")
	}
	binary.NativeEndian.PutUint64(page[at:], 1)
	if _, err := f.WriteAt(page, off); err != nil {
		t.Fatal(err)
	}
	if err := checkFile(path); err == nil || !strings.Contains(err.Error(), "frees page 1") {
		t.Fatalf("checkFile(a freelist freeing meta page 1) = %v, want it refused", err)
	}
}

// BenchmarkCheckPages checks the pages of the store BenchmarkRestore
// opens (-restore-keys, -restore-file): what every Open adds to the
// restore before bbolt maps the file.
func BenchmarkCheckPages(b *testing.B) {
	path := *restoreFile
	if path == "" {
		path = filepath.Join(b.TempDir(), "db")
	}
	if _, err := os.Stat(path); err != nil {
		writeRestoreFile(b, path)
	}
	b.ResetTimer()
	for b.Loop() {
		if err := checkFile(path); err != nil {
			b.Fatal(err)
		}
	}
}
