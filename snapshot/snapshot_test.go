package snapshot

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/httpkv/httpkv/auth"
	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/lease"
	"github.com/httpkv/httpkv/mvcc"
)

// source is a store with history, a compaction, leases, users, roles and
// auth on, and the snapshot file made of it.
type source struct {
	kv   *mvcc.Store
	file string
	data []byte // the file's bytes
	want Info   // what the file holds, Size and Hash but
}

func newSource(tb testing.TB) *source {
	tb.Helper()
	lessor := lease.New(lease.Config{})
	tb.Cleanup(lessor.Close)
	kval, err := mvcc.Open(filepath.Join(tb.TempDir(), "db"), lessor, nil, mvcc.Options{NoFsync: true})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { kval.Close() })
	must := func(err error) {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
	}
	var leaseID int64
	for _, ttl := range []int64{60, 600} {
		_, err := kval.Write(func(tx *mvcc.WriteTxn) error {
			l, err := lessor.Grant(tx, 0, ttl)
			leaseID = l.ID
			return err
		})
		must(err)
	}
	for i := range 100 {
		_, err := kval.Put(kv.PutRequest{Key: fmt.Appendf(nil, "k%03d", i), Value: bytes.Repeat([]byte{'v'}, i)})
		must(err)
	}
	_, err = kval.Put(kv.PutRequest{Key: []byte("leased"), Value: []byte("x"), Lease: leaseID})
	must(err)
	_, err = kval.DeleteRange(kv.DeleteRequest{Key: []byte("k000"), End: []byte("k010")})
	must(err)
	done, err := kval.Compact(kval.Rev() - 1)
	must(err)
	must(<-done)
	a := auth.New(auth.WriteFunc(func(fn func(auth.Bucket) error) error {
		_, err := kval.Write(func(tx *mvcc.WriteTxn) error { return fn(tx) })
		return err
	}), nil, auth.Config{BcryptCost: 4})
	for _, u := range []string{auth.RootUser, "alice", "bob"} {
		must(a.AddUser(u, u+"-secret"))
	}
	must(a.AddRole(auth.RootRole))
	must(a.AddRole("app"))
	must(a.GrantRole(auth.RootUser, auth.RootRole))
	must(a.SetEnabled(true))

	sn, err := kval.Snapshot()
	must(err)
	defer sn.Close()
	var buf bytes.Buffer
	n, err := Write(&buf, sn)
	if err != nil || n != sn.Size()+HashSize || int64(buf.Len()) != n {
		tb.Fatalf("Write() = %d, %v with %d bytes written, want %d, nil", n, err, buf.Len(), sn.Size()+HashSize)
	}
	s := &source{kv: kval, file: filepath.Join(tb.TempDir(), "snap.db"), data: buf.Bytes(), want: Info{Format: FormatHTTPKV,
		Revision: kval.Rev(), CompactRevision: kval.CompactRev(), Keys: 91, Leases: 2, Users: 3, Roles: 2, AuthEnabled: true,
	}}
	must(os.WriteFile(s.file, s.data, 0o600))
	return s
}

// TestInspect reports what a snapshot holds, and its size and hash.
func TestInspect(t *testing.T) {
	s := newSource(t)
	got, err := Inspect(s.file)
	if err != nil {
		t.Fatalf("Inspect() = %v, want nil", err)
	}
	hash, size, err := Verify(s.file)
	if err != nil || size != int64(len(s.data)) || len(hash) != 2*HashSize {
		t.Fatalf("Verify() = %q, %d, %v, want a hash, %d, nil", hash, size, err, len(s.data))
	}
	want := s.want
	want.Size, want.Hash = size, hash
	if got != want {
		t.Fatalf("Inspect() = %+v, want %+v", got, want)
	}
}

// damaged returns ways of damaging a snapshot file.
func damaged(data []byte) []struct {
	name string
	b    []byte
} {
	flip := func(i int) []byte {
		b := bytes.Clone(data)
		b[i] ^= 0x40
		return b
	}
	n := len(data)
	return []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"shorter than the hash", data[:HashSize-1]},
		{"cut in the middle", data[:n/2]},
		{"hash cut off", data[:n-HashSize]},
		{"last byte missing", data[:n-1]},
		{"a byte too many", append(bytes.Clone(data), 0)},
		{"a data byte flipped", flip(n / 3)},
		{"a hash byte flipped", flip(n - 5)},
	}
}

// TestCheckerRefusesDamage: a snapshot cut short, extended or changed
// anywhere fails its hash, whatever the sizes of the writes it came in.
func TestCheckerRefusesDamage(t *testing.T) {
	s := newSource(t)
	for _, chunk := range []int{1, 7, HashSize, 4096, len(s.data)} {
		c := NewChecker()
		for b := s.data; len(b) > 0; b = b[min(chunk, len(b)):] {
			c.Write(b[:min(chunk, len(b))])
		}
		if _, err := c.Check(); err != nil {
			t.Fatalf("Check() of an intact snapshot written %d bytes at a time = %v, want nil", chunk, err)
		}
	}
	for _, tc := range damaged(s.data) {
		t.Run(tc.name, func(t *testing.T) {
			c := NewChecker()
			c.Write(tc.b)
			if _, err := c.Check(); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Check() = %v, want ErrCorrupt", err)
			}
			p := filepath.Join(t.TempDir(), "snap.db")
			if err := os.WriteFile(p, tc.b, 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := Inspect(p); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Inspect() = %v, want ErrCorrupt", err)
			}
		})
	}
}

// TestRestore writes the store into a new directory, where it opens at
// the snapshot's revision with its history, leases and auth.
func TestRestore(t *testing.T) {
	s := newSource(t)
	dir := filepath.Join(t.TempDir(), "new", "data")
	info, err := Restore(s.file, dir, "httpkv.db")
	if err != nil {
		t.Fatalf("Restore() = %v, want nil", err)
	}
	want := s.want
	want.Size = int64(len(s.data))
	want.Hash = info.Hash
	if info != want || len(info.Hash) != 2*HashSize {
		t.Fatalf("Restore() = %+v, want %+v", info, want)
	}
	path := filepath.Join(dir, "httpkv.db")
	b, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(b, s.data[:len(s.data)-HashSize]) {
		t.Fatalf("restored file: %d bytes, %v, want the snapshot's %d bytes of data", len(b), err, len(s.data)-HashSize)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("restored directory holds %d entries, want the store's file alone", len(entries))
	}
	kval, err := mvcc.Open(path, nil, nil, mvcc.Options{NoFsync: true})
	if err != nil {
		t.Fatalf("opening the restored store: %v", err)
	}
	defer kval.Close()
	if kval.Rev() != s.want.Revision || kval.CompactRev() != s.want.CompactRevision {
		t.Fatalf("restored store at revision %d compact %d, want %d and %d", kval.Rev(), kval.CompactRev(), s.want.Revision, s.want.CompactRevision)
	}
	for rev := s.want.CompactRevision; rev <= s.want.Revision; rev++ {
		want, err := s.kv.Range([]byte{0}, []byte{}, kv.RangeOptions{Revision: rev})
		if err != nil {
			t.Fatal(err)
		}
		got, err := kval.Range([]byte{0}, []byte{}, kv.RangeOptions{Revision: rev})
		if err != nil || fmt.Sprint(got.KVs) != fmt.Sprint(want.KVs) {
			t.Fatalf("restored Range(every key, rev=%d) = %d keys, %v, want the source's %d", rev, len(got.KVs), err, len(want.KVs))
		}
	}
	// Restoring again into the directory, now full, is refused.
	kval.Close()
	if b, err = os.ReadFile(path); err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(s.file, dir, "httpkv.db"); !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("Restore() into a non-empty directory = %v, want ErrNotEmpty", err)
	}
	if b2, _ := os.ReadFile(path); !bytes.Equal(b2, b) {
		t.Fatal("a refused Restore changed the directory")
	}
}

// TestRestoreRefusesDamage leaves the directory as it was, absent or
// empty, when the snapshot is damaged.
func TestRestoreRefusesDamage(t *testing.T) {
	s := newSource(t)
	for _, tc := range damaged(s.data) {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "snap.db")
			if err := os.WriteFile(p, tc.b, 0o600); err != nil {
				t.Fatal(err)
			}
			absent := filepath.Join(t.TempDir(), "absent", "data")
			if _, err := Restore(p, absent, "httpkv.db"); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Restore() = %v, want ErrCorrupt", err)
			}
			if _, err := os.Stat(absent); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("after a refused Restore, the directory: %v, want it still absent", err)
			}
			empty := t.TempDir()
			if _, err := Restore(p, empty, "httpkv.db"); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Restore() = %v, want ErrCorrupt", err)
			}
			if entries, _ := os.ReadDir(empty); len(entries) != 0 {
				t.Fatalf("after a refused Restore, the directory holds %d entries, want none", len(entries))
			}
		})
	}
}

// TestSave keeps an intact snapshot, and nothing of a damaged or short
// one: an earlier file of the name stays as it was.
func TestSave(t *testing.T) {
	s := newSource(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "backup.snapshot")
	info, err := Save(path, bytes.NewReader(s.data), int64(len(s.data)))
	if err != nil || info.Revision != s.want.Revision || info.Size != int64(len(s.data)) {
		t.Fatalf("Save() = %+v, %v, want revision %d and size %d", info, err, s.want.Revision, len(s.data))
	}
	if b, err := os.ReadFile(path); err != nil || !bytes.Equal(b, s.data) {
		t.Fatalf("saved file: %d bytes, %v, want the snapshot's %d", len(b), err, len(s.data))
	}
	cases := append(damaged(s.data), struct {
		name string
		b    []byte
	}{"shorter than announced", s.data[:len(s.data)-1]})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			size := int64(len(tc.b))
			if tc.name == "shorter than announced" {
				size = int64(len(s.data))
			}
			if _, err := Save(path, bytes.NewReader(tc.b), size); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Save() = %v, want ErrCorrupt", err)
			}
			entries, _ := os.ReadDir(dir)
			b, _ := os.ReadFile(path)
			if len(entries) != 1 || !bytes.Equal(b, s.data) {
				t.Fatalf("after a refused Save: %d entries, the file changed: %v; want the earlier file alone, unchanged", len(entries), !bytes.Equal(b, s.data))
			}
		})
	}
}

// TestVerifyingReader fails at the end of data whose hash is not the one
// verified before: a file changed while it was restored.
func TestVerifyingReader(t *testing.T) {
	data := []byte("the data verified before")
	sum := sha256.Sum256(data)
	for _, tc := range []struct {
		name    string
		read    []byte
		wantErr bool
	}{{"unchanged", data, false}, {"changed", []byte("the data changed meanwhile"), true}} {
		r := &verifyingReader{r: bytes.NewReader(tc.read), h: sha256.New(), want: hex.EncodeToString(sum[:])}
		_, err := io.Copy(io.Discard, r)
		if (err != nil) != tc.wantErr || (tc.wantErr && !errors.Is(err, ErrCorrupt)) {
			t.Errorf("reading %s data = %v, want error %v (ErrCorrupt)", tc.name, err, tc.wantErr)
		}
	}
}
