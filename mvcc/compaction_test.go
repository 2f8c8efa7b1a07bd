package mvcc

import (
	"path/filepath"
	"testing"

	"github.com/httpkv/httpkv/kv"
)

// openTestStore opens a store in a fresh directory and closes it when the
// test ends.
func openTestStore(tb testing.TB, opts Options) *Store {
	tb.Helper()
	return openTestStoreWith(tb, nil, nil, opts)
}

// openTestStoreWith is openTestStore with a lessor and a committer.
func openTestStoreWith(tb testing.TB, le Lessor, c Committer, opts Options) *Store {
	tb.Helper()
	opts.NoFsync = true
	s, err := Open(filepath.Join(tb.TempDir(), "db"), le, c, opts)
	if err != nil {
		tb.Fatalf("Open() = %v, want nil", err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// TestCompactKeyPutAgainAtCompactRev compacts at the revision of a write
// that deleted a key and put it again. The put is what reads at that
// revision see: it must survive in the index and in the file, before and
// after a reopen.
func TestCompactKeyPutAgainAtCompactRev(t *testing.T) {
	s := openTestStore(t, Options{})
	key := []byte("a")
	if _, err := s.Put(kv.PutRequest{Key: key, Value: []byte("old")}); err != nil {
		t.Fatalf("Put(a=old) = %v, want nil", err)
	}
	changes, err := s.Write(func(tx *WriteTxn) error {
		if _, err := tx.DeleteRange(kv.DeleteRequest{Key: key}); err != nil {
			return err
		}
		_, err := tx.Put(kv.PutRequest{Key: key, Value: []byte("new")})
		return err
	})
	if err != nil {
		t.Fatalf("Write(delete a, put a=new) = %v, want nil", err)
	}
	rev := changes.Revision
	done, err := s.Compact(rev)
	if err != nil {
		t.Fatalf("Compact(%d) = %v, want nil", rev, err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Compact(%d) finished with %v, want nil", rev, err)
	}
	want := kv.KeyValue{Key: key, Value: []byte("new"), CreateRevision: rev, ModRevision: rev, Version: 1}
	check := func(when string) {
		t.Helper()
		for _, at := range []int64{rev, 0} {
			got, err := s.Range(key, nil, kv.RangeOptions{Revision: at})
			if err != nil || len(got.KVs) != 1 || !sameKeyValue(got.KVs[0], want) {
				t.Errorf("%s: Range(a, rev=%d) = %s, %v, want [%s]", when, at, showKVs(got.KVs), err, showKV(&want))
			}
		}
	}
	check("after compaction")
	if err := s.Close(); err != nil {
		t.Fatalf("Close() = %v, want nil", err)
	}
	s, err = Open(s.Path(), nil, nil, Options{NoFsync: true})
	if err != nil {
		t.Fatalf("reopen: Open() = %v, want nil", err)
	}
	defer s.Close()
	check("after reopen")
}
