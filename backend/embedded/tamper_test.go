package embedded

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/lease"
	"github.com/httpkv/httpkv/mvcc"
	"github.com/httpkv/httpkv/mvcc/mvcctest"
)

// TestOpenRefusesTamperedStore: a store file edited around the store's
// checks (a record at a revision that wraps int64, a version of 0, a key
// on a lease that does not exist, a compaction ahead of the store, a
// meta page of another page size, a page that names another, ...) is
// refused when the server opens it, with an ErrCorrupt that says
// "corrupt" and what is wrong, not a panic, and it is left as it was.
func TestOpenRefusesTamperedStore(t *testing.T) {
	dir := t.TempDir()
	b := openBackend(t, dir, Options{})
	ctx := context.Background()
	l, err := b.Grant(ctx, 0, 600)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		r := kv.PutRequest{Key: fmt.Appendf(nil, "k%03d", i), Value: bytes.Repeat([]byte{'v'}, 1024)}
		if i%50 == 0 {
			r.Lease = l.ID
		}
		if _, err := b.Put(ctx, r, nil); err != nil {
			t.Fatal(err)
		}
	}
	b.Close()
	good, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range mvcctest.Tamperings() {
		t.Run(tc.Name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, FileName)
			if err := os.WriteFile(path, good, 0o600); err != nil {
				t.Fatal(err)
			}
			tc.Edit(t, path)
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			b, err := Open(dir, nil, nil, Options{Store: mvcc.Options{NoFsync: true}})
			if err == nil {
				b.Close()
				t.Fatalf("Open of a store with %s succeeded, want it refused", tc.Name)
			}
			if !errors.Is(err, mvcc.ErrCorrupt) && !errors.Is(err, lease.ErrCorrupt) || !strings.Contains(err.Error(), "corrupt") {
				t.Fatalf("Open of a store with %s = %v, want an ErrCorrupt saying so", tc.Name, err)
			}
			t.Logf("%s: %v", tc.Name, err)
			if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
				t.Fatalf("the refused Open changed the file")
			}
		})
	}
}
