package mvcc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/httpkv/httpkv/kv"
)

// stallLimit bounds how long a test waits for work that must not wait for
// an open snapshot. It is a deadlock detector, not a measurement: healthy
// runs finish far sooner, even under -race on a loaded machine.
const stallLimit = 3 * time.Minute

// waitFor fails the test unless ch closes within stallLimit.
func waitFor(tb testing.TB, ch <-chan struct{}, what string) {
	tb.Helper()
	select {
	case <-ch:
	case <-time.After(stallLimit):
		tb.Fatalf("%s did not finish within %v while a snapshot was open: stalled behind it", what, stallLimit)
	}
}

// gatedWriter writes to w, and once it has taken gate bytes it stops
// taking any until released: a snapshot's client that stopped reading.
type gatedWriter struct {
	w       io.Writer
	gate    int64
	n       int64
	paused  chan struct{} // closed when the gate is reached
	release chan struct{} // closed by the test to go on
	once    sync.Once
}

func newGatedWriter(w io.Writer, gate int64) *gatedWriter {
	return &gatedWriter{w: w, gate: gate, paused: make(chan struct{}), release: make(chan struct{})}
}

func (g *gatedWriter) Write(p []byte) (int, error) {
	if g.n >= g.gate {
		g.once.Do(func() { close(g.paused) })
		<-g.release
	}
	n, err := g.w.Write(p)
	g.n += int64(n)
	return n, err
}

// snapshotValue is the value of key in round: every value differs, so a
// copy holding a value of the wrong round is caught.
func snapshotValue(key string, round, size int) []byte {
	v := bytes.Repeat([]byte{byte(round)}, size)
	copy(v, fmt.Sprintf("%s@%d", key, round))
	return v
}

// fillStore puts keys of valueSize bytes, in txns of 16, until the backend
// holds at least size bytes, and returns the keys' values.
func fillStore(tb testing.TB, s *Store, size int64, round, valueSize int) map[string][]byte {
	tb.Helper()
	want, err := fill(s, size, round, valueSize)
	if err != nil {
		tb.Fatal(err)
	}
	return want
}

// fill is fillStore for goroutines other than the test's.
func fill(s *Store, size int64, round, valueSize int) (map[string][]byte, error) {
	want := make(map[string][]byte)
	for i := 0; ; {
		if db, _ := s.DBSize(); db >= size {
			return want, nil
		}
		var ops []kv.Op
		for range 16 {
			k := fmt.Sprintf("k%07d", i)
			v := snapshotValue(k, round, valueSize)
			want[k] = v
			ops = append(ops, kv.Op{Put: &kv.PutRequest{Key: []byte(k), Value: v}})
			i++
		}
		if _, err := s.Txn(kv.TxnRequest{Success: ops}); err != nil {
			return nil, fmt.Errorf("Txn(16 puts) = %w, want nil", err)
		}
	}
}

// snapshotTestSize is the size of the store TestSnapshotUnderWrites copies:
// 64 MiB, or 1 GiB with HTTPKV_SNAPSHOT_1GIB=1.
func snapshotTestSize() int64 {
	if os.Getenv("HTTPKV_SNAPSHOT_1GIB") != "" {
		return 1 << 30
	}
	return 64 << 20
}

// TestSnapshotUnderWrites copies a store while a client of the snapshot
// has stopped reading half way, and meanwhile writes more than doubling
// the file (which needs bbolt's mapping of it to grow), compacts and
// defragments. None of that may wait for the snapshot, and the copy must
// hold exactly the state at the snapshot's revision.
func TestSnapshotUnderWrites(t *testing.T) {
	s := openTestStore(t, Options{QuotaBytes: 16 << 30})
	const valueSize = 64 << 10
	size := snapshotTestSize()
	want := fillStore(t, s, size, 1, valueSize)
	// A delete, and a compaction, so the copy has both to show.
	if _, err := s.DeleteRange(kv.DeleteRequest{Key: []byte("k0000000")}); err != nil {
		t.Fatal(err)
	}
	delete(want, "k0000000")
	done, err := s.Compact(s.Rev() - 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	rev, compactRev := s.Rev(), s.CompactRev()

	sn, err := s.Snapshot()
	if err != nil {
		t.Fatalf("Snapshot() = %v, want nil", err)
	}
	defer sn.Close()
	if sn.Revision() != rev || sn.CompactRevision() != compactRev {
		t.Fatalf("Snapshot() at revision %d compact %d, want %d and %d", sn.Revision(), sn.CompactRevision(), rev, compactRev)
	}
	copyPath := filepath.Join(t.TempDir(), "copy.db")
	f, err := os.Create(copyPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gw := newGatedWriter(f, sn.Size()/2)
	type result struct {
		n   int64
		err error
	}
	copied := make(chan result, 1)
	go func() {
		n, err := sn.WriteTo(gw)
		copied <- result{n, err}
	}()
	<-gw.paused

	// With the snapshot's client stalled: grow the file well past what
	// bbolt had mapped, compact, defragment, and write on.
	size0, _ := s.DBSize()
	wrote := make(chan struct{})
	var after map[string][]byte
	var writeErr error
	go func() {
		defer close(wrote)
		after, writeErr = fill(s, 2*size0+1<<20, 2, valueSize)
	}()
	waitFor(t, wrote, "writing while the snapshot is open")
	if writeErr != nil {
		t.Fatal(writeErr)
	}
	now := maps.Clone(want)
	maps.Copy(now, after)
	maintained := make(chan struct{})
	var maintErr error
	go func() {
		defer close(maintained)
		done, err := s.Compact(s.Rev())
		if err == nil {
			err = <-done
		}
		if err == nil {
			err = s.Defrag()
		}
		if err == nil {
			_, err = s.Put(kv.PutRequest{Key: []byte("after-defrag"), Value: []byte("x")})
		}
		maintErr = err
	}()
	waitFor(t, maintained, "compacting and defragmenting")
	if maintErr != nil {
		t.Fatalf("compact, defrag and put during the snapshot = %v, want nil", maintErr)
	}

	close(gw.release)
	res := <-copied
	if res.err != nil || res.n != sn.Size() {
		t.Fatalf("WriteTo() = %d, %v, want %d, nil", res.n, res.err, sn.Size())
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := sn.Close(); err != nil {
		t.Fatalf("Snapshot.Close() = %v, want nil", err)
	}
	if n := s.Snapshots(); n != 0 || len(s.retired) != 0 {
		t.Fatalf("after Close: %d snapshots open, %d old files kept, want 0 and 0", n, len(s.retired))
	}
	// The store is on its new file, with everything written meanwhile.
	checkStoreHolds(t, s, s.Rev(), now)

	if err := CheckFile(copyPath); err != nil {
		t.Fatalf("CheckFile(copy) = %v, want nil", err)
	}
	c, err := Open(copyPath, nil, nil, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("Open(copy, ReadOnly) = %v", err)
	}
	defer c.Close()
	if c.Rev() != rev || c.CompactRev() != compactRev {
		t.Fatalf("copy at revision %d compact %d, want %d and %d", c.Rev(), c.CompactRev(), rev, compactRev)
	}
	checkStoreHolds(t, c, rev, want)
	// History down to the compact revision: the deleted key is there at it.
	rr, err := c.Range([]byte("k0000000"), nil, kv.RangeOptions{Revision: compactRev})
	if err != nil || len(rr.KVs) != 1 {
		t.Fatalf("copy: Range(k0000000, rev=%d) = %+v, %v, want the key before its delete", compactRev, rr.KVs, err)
	}
	if _, err := c.Put(kv.PutRequest{Key: []byte("x"), Value: []byte("y")}); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("Put on a read-only store = %v, want ErrReadOnly", err)
	}
}

// checkStoreHolds fails unless s holds exactly the keys of want at rev.
func checkStoreHolds(tb testing.TB, s *Store, rev int64, want map[string][]byte) {
	tb.Helper()
	rr, err := s.Range([]byte("k"), []byte("l"), kv.RangeOptions{Revision: rev})
	if err != nil {
		tb.Fatalf("Range(k..l, rev=%d) = %v", rev, err)
	}
	if len(rr.KVs) != len(want) {
		tb.Fatalf("Range(k..l, rev=%d) = %d keys, want %d", rev, len(rr.KVs), len(want))
	}
	for _, kval := range rr.KVs {
		if !bytes.Equal(kval.Value, want[string(kval.Key)]) {
			tb.Fatalf("Range(k..l, rev=%d): %s = %.20q..., want %.20q...", rev, kval.Key, kval.Value, want[string(kval.Key)])
		}
	}
}

// TestSnapshotStopsOnClose closes the store while a snapshot streams: the
// snapshot fails with ErrClosed at its next chunk, and Close returns once
// its owner has closed it.
func TestSnapshotStopsOnClose(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "db"), nil, nil, Options{NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	fillStore(t, s, 4*snapshotChunk, 1, 16<<10)
	sn, err := s.Snapshot()
	if err != nil {
		t.Fatalf("Snapshot() = %v", err)
	}
	gw := newGatedWriter(io.Discard, 1)
	copied := make(chan error, 1)
	go func() {
		_, err := sn.WriteTo(gw)
		copied <- err
	}()
	<-gw.paused
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		s.Close()
	}()
	for !s.isClosed() {
		time.Sleep(time.Millisecond)
	}
	if _, err := s.Snapshot(); !errors.Is(err, kv.ErrClosed) {
		t.Fatalf("Snapshot() while closing = %v, want ErrClosed", err)
	}
	close(gw.release)
	if err := <-copied; !errors.Is(err, kv.ErrClosed) {
		t.Fatalf("WriteTo() while the store closes = %v, want ErrClosed", err)
	}
	select {
	case <-closed:
		t.Fatal("Close() returned while a snapshot was still open, want it to wait")
	default:
	}
	sn.Close()
	<-closed
}

// TestCheckFile refuses a damaged or truncated copy, and a file that is
// not a store.
func TestCheckFile(t *testing.T) {
	s := openTestStore(t, Options{})
	fillStore(t, s, 2<<20, 1, 4<<10)
	sn, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := sn.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	sn.Close()
	good := buf.Bytes()
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if err := CheckFile(write("good", good)); err != nil {
		t.Fatalf("CheckFile(an intact copy) = %v, want nil", err)
	}
	pageSize := os.Getpagesize()
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"truncated", good[:len(good)/2]},
		{"leaf page header zeroed", func() []byte {
			// The last leaf page (flags 0x02 after the 8-byte page ID)
			// that names itself loses its header.
			b := bytes.Clone(good)
			for p := len(b) - pageSize; p >= 2*pageSize; p -= pageSize {
				id := binary.LittleEndian.Uint64(b[p:])
				if id == uint64(p/pageSize) && binary.LittleEndian.Uint16(b[p+8:]) == 0x02 {
					clear(b[p : p+16])
					return b
				}
			}
			t.Fatal("the copy has no leaf page")
			return nil
		}()},
		{"not bbolt", bytes.Repeat([]byte("x"), 4*pageSize)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckFile(write(tc.name, tc.b))
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("CheckFile(%s) = %v, want ErrCorrupt", tc.name, err)
			}
		})
	}
}
