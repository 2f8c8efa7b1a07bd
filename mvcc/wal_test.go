package mvcc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/httpkv/httpkv/kv"
)

// openLogged opens a store with fsync whose batches stay in the log
// until a write outside the history, Close or an hour goes by.
func openLogged(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(path, nil, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.checkpointEvery = time.Hour
	return s
}

// crashCopy copies the store's file and log as a crash would leave them
// (no checkpoint runs meanwhile: see openLogged) into a new directory.
func crashCopy(t *testing.T, s *Store) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "db")
	for _, suffix := range []string{"", walSuffix} {
		b, err := os.ReadFile(s.Path() + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst+suffix, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// dump reads every key of s with its metadata.
func dump(t *testing.T, s *Store) (int64, string) {
	t.Helper()
	res, err := s.Range([]byte{0}, []byte{0xff}, kv.RangeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := ""
	for _, e := range res.KVs {
		out += fmt.Sprintf("%s=%s c%d m%d v%d\n", e.Key, e.Value, e.CreateRevision, e.ModRevision, e.Version)
	}
	return res.Revision, out
}

// TestLogReplay acknowledges writes from the log only, copies the files
// as a crash would leave them, and checks the copy opens with every
// acknowledged write, its history included; reads of the running store
// see them through the pending records meanwhile.
func TestLogReplay(t *testing.T) {
	s := openLogged(t, filepath.Join(t.TempDir(), "db"))
	defer s.Close()
	mustPut(t, s, "a", "1")
	for i := range 50 {
		mustPut(t, s, fmt.Sprintf("k%02d", i%7), fmt.Sprint(i))
	}
	if _, err := s.DeleteRange(kv.DeleteRequest{Key: []byte("k03")}); err != nil {
		t.Fatal(err)
	}
	if s.openTx == nil || s.pending.Load() == nil {
		t.Fatal("the writes were checkpointed; want them in the log only")
	}
	wantRev, want := dump(t, s)
	var wantHistory []kv.Event
	if _, err := s.ReadHistory(2, wantRev, func(e kv.Event) bool { wantHistory = append(wantHistory, e); return true }); err != nil {
		t.Fatal(err)
	}
	if len(wantHistory) != 52 {
		t.Fatalf("history of %d events; want 52", len(wantHistory))
	}

	c, err := Open(crashCopy(t, s), nil, nil, Options{NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	gotRev, got := dump(t, c)
	if gotRev != wantRev || got != want {
		t.Fatalf("after replay: revision %d\n%s\nwant revision %d\n%s", gotRev, got, wantRev, want)
	}
	var gotHistory []kv.Event
	if _, err := c.ReadHistory(2, wantRev, func(e kv.Event) bool { gotHistory = append(gotHistory, e); return true }); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(gotHistory) != fmt.Sprint(wantHistory) {
		t.Fatalf("history after replay differs:\n%v\nwant\n%v", gotHistory, wantHistory)
	}
	// The replayed store logs on from its revision.
	mustPut(t, c, "after", "x")
	if c.Rev() != wantRev+1 {
		t.Fatalf("revision after a put = %d; want %d", c.Rev(), wantRev+1)
	}
}

// TestLogTornTail cuts the log inside its last batch: the batches before
// it are replayed, the torn one is not, and nothing else is lost.
func TestLogTornTail(t *testing.T) {
	s := openLogged(t, filepath.Join(t.TempDir(), "db"))
	defer s.Close()
	mustPut(t, s, "a", "1")
	mustPut(t, s, "b", "2")
	end := s.wal.off
	mustPut(t, s, "c", "3")
	dst := crashCopy(t, s)
	f, err := os.OpenFile(dst+walSuffix, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Garble the last batch's last bytes, as a torn write would.
	if _, err := f.WriteAt([]byte{0xde, 0xad}, s.wal.off-2); err != nil {
		t.Fatal(err)
	}
	f.Close()
	c, err := Open(dst, nil, nil, Options{NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rev, got := dump(t, c)
	if rev != 3 || got != "a=1 c2 m2 v1\nb=2 c3 m3 v1\n" {
		t.Fatalf("after a torn batch: revision %d\n%s", rev, got)
	}
	if end >= s.wal.off {
		t.Fatal("the third put was not logged")
	}
}

// TestLogOfAnotherFile checks that a log is not replayed onto a file it
// does not follow: the file at the path replaced by an older copy of
// itself (a restored backup) keeps what the copy holds.
func TestLogOfAnotherFile(t *testing.T) {
	s := openLogged(t, filepath.Join(t.TempDir(), "db"))
	defer s.Close()
	mustPut(t, s, "a", "1")
	// A write outside the history checkpoints: the backup's state.
	if _, err := s.Write(func(wt *WriteTxn) error { return wt.UnsafePut([]byte("other"), []byte("k"), []byte("v")) }); err != nil {
		t.Fatal(err)
	}
	backup, err := os.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, "b", "2")
	mustPut(t, s, "c", "3")
	dst := crashCopy(t, s)
	// The log's base is the checkpoint after the backup's, once more
	// revisions were checkpointed.
	if _, err := s.Write(func(wt *WriteTxn) error { return wt.UnsafePut([]byte("other"), []byte("k"), []byte("w")) }); err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, "d", "4")
	b2, err := os.ReadFile(s.Path() + walSuffix)
	if err != nil {
		t.Fatal(err)
	}
	// dst now holds the backup beside a log that follows a later
	// checkpoint.
	if err := os.WriteFile(dst, backup, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst+walSuffix, b2, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Open(dst, nil, nil, Options{NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rev, got := dump(t, c)
	if rev != 2 || got != "a=1 c2 m2 v1\n" {
		t.Fatalf("backup with a later log: revision %d\n%s", rev, got)
	}
}

// TestLogOfAnotherStore checks that a log is not replayed onto another
// store's file whose last checkpoint has the same revision as the log's
// base: every new store checkpoints at revision 2.
func TestLogOfAnotherStore(t *testing.T) {
	a := openLogged(t, filepath.Join(t.TempDir(), "db"))
	defer a.Close()
	mustPut(t, a, "a", "1") // the first write of a new file checkpoints
	mustPut(t, a, "b", "2") // logged, on the checkpoint at 2
	dst := crashCopy(t, a)

	otherPath := filepath.Join(t.TempDir(), "db")
	b := openLogged(t, otherPath)
	mustPut(t, b, "z", "9") // a checkpoint at 2 as well
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	other, err := os.ReadFile(otherPath)
	if err != nil {
		t.Fatal(err)
	}
	// The other store's file in place of the first's, the first's log
	// beside it.
	if err := os.WriteFile(dst, other, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Open(dst, nil, nil, Options{NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if rev, got := dump(t, c); rev != 2 || got != "z=9 c2 m2 v1\n" {
		t.Fatalf("another store's file beside the log opens at revision %d with\n%s\nwant its own state alone", rev, got)
	}
}

// TestSnapshotInPlaceOfFile checks that a snapshot put in the file's
// place by hand, beside the live store's log, opens as the snapshot:
// the log's batches after it follow a checkpoint the snapshot does not
// hold, and are not replayed onto it.
func TestSnapshotInPlaceOfFile(t *testing.T) {
	s := openLogged(t, filepath.Join(t.TempDir(), "db"))
	defer s.Close()
	mustPut(t, s, "a", "1") // checkpoints
	mustPut(t, s, "b", "2") // logged
	sn, err := s.Snapshot() // checkpoints at 3
	if err != nil {
		t.Fatal(err)
	}
	var backup bytes.Buffer
	if _, err := sn.WriteTo(&backup); err != nil {
		t.Fatal(err)
	}
	sn.Close()
	mustPut(t, s, "c", "3")
	mustPut(t, s, "d", "4")
	if s.pending.Load() == nil {
		t.Fatal("no batch in the log")
	}
	dst := crashCopy(t, s)
	if err := os.WriteFile(dst, backup.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Open(dst, nil, nil, Options{NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if rev, got := dump(t, c); rev != 3 || got != "a=1 c2 m2 v1\nb=2 c3 m3 v1\n" {
		t.Fatalf("the snapshot put in the file's place opens at revision %d with\n%s\nwant its own state (revision 3)", rev, got)
	}
}

// TestLogWithoutID checks that a log written by a build from before
// checkpoints had ids (a base frame of the revision alone, an 8-byte
// checkpoint in the file's meta, over the 16 bytes a build with ids had
// written there) is still replayed: after a roll back to that build, its
// crash loses nothing on the upgrade again.
func TestLogWithoutID(t *testing.T) {
	s := openLogged(t, filepath.Join(t.TempDir(), "db"))
	defer s.Close()
	mustPut(t, s, "a", "1") // checkpoints
	mustPut(t, s, "b", "2") // logged
	wantRev, want := dump(t, s)
	dst := crashCopy(t, s)

	// The log and the file as that version wrote them.
	w, err := openWAL(dst+walSuffix, true)
	if err != nil {
		t.Fatal(err)
	}
	var recs []walRecord
	base, _ := w.replay(func(batch []walRecord) { recs = append(recs, batch...) })
	if base.id == 0 || len(recs) == 0 {
		t.Fatalf("the log's base is %+v with %d records; want an id and records", base, len(recs))
	}
	legacy := append(make([]byte, walFrameHeader), frameBase)
	legacy = binary.BigEndian.AppendUint64(legacy, uint64(base.rev))
	seal(legacy)
	if _, err := w.f.WriteAt(legacy, 0); err != nil {
		t.Fatal(err)
	}
	w.off = int64(len(legacy))
	if err := w.appendBatch(recs); err != nil {
		t.Fatal(err)
	}
	w.close()
	db, err := bolt.Open(dst, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(metaBucket)
		if v := meta.Get(metaCheckpoint); len(v) != 16 {
			t.Errorf("the checkpoint in the file is %d bytes; want 16", len(v))
		}
		return putInt64(meta, metaCheckpoint, base.rev)
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	c, err := Open(dst, nil, nil, Options{NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if rev, got := dump(t, c); rev != wantRev || got != want {
		t.Fatalf("after the crash of a log without ids: revision %d\n%s\nwant %d\n%s", rev, got, wantRev, want)
	}
}

// TestRewindFails checks that a checkpoint whose commit succeeded is
// answered as done when rewinding the log then fails: the store fails,
// and every write is there when it is opened again.
func TestRewindFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	s := openLogged(t, path)
	mustPut(t, s, "a", "1") // checkpoints
	mustPut(t, s, "b", "2") // logged: the checkpoint rewinds the log
	// Writes to the log now fail.
	rw := s.wal.f
	ro, err := os.Open(path + walSuffix)
	if err != nil {
		t.Fatal(err)
	}
	s.wal.f = ro
	defer rw.Close()
	// A write outside the history checkpoints.
	if _, err := s.Write(func(wt *WriteTxn) error { return wt.UnsafePut([]byte("other"), []byte("k"), []byte("v")) }); err != nil {
		t.Fatalf("a checkpoint in the file whose rewind failed answered %v; want success", err)
	}
	if s.Failed() == nil {
		t.Fatal("the store did not fail with its log")
	}
	if _, err := s.Put(kv.PutRequest{Key: []byte("c"), Value: []byte("3")}); err == nil {
		t.Fatal("a put on the failed store succeeded")
	}
	wantRev, want := dump(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	c, err := Open(path, nil, nil, Options{NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if rev, got := dump(t, c); rev != wantRev || got != want || want != "a=1 c2 m2 v1\nb=2 c3 m3 v1\n" {
		t.Fatalf("reopened: revision %d\n%s\nwant %d\n%s", rev, got, wantRev, want)
	}
}

// TestCheckpointOnClose checks that Close puts every logged batch in
// bbolt and rewinds the log.
func TestCheckpointOnClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	s := openLogged(t, path)
	mustPut(t, s, "a", "1")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Without the log, the file alone has the put.
	if err := os.Remove(path + walSuffix); err != nil {
		t.Fatal(err)
	}
	c, err := Open(path, nil, nil, Options{NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if rev, got := dump(t, c); rev != 2 || got != "a=1 c2 m2 v1\n" {
		t.Fatalf("after Close: revision %d\n%s", rev, got)
	}
}

// TestLogCheckedBeforeReplay gives Open a log whose batch has a valid
// CRC but a record the store would never write: Open refuses the store
// as corrupt and leaves the file as it was, and without the log the
// file opens.
func TestLogCheckedBeforeReplay(t *testing.T) {
	s := openLogged(t, filepath.Join(t.TempDir(), "db"))
	// The first write to a new file is a checkpoint; the second is
	// logged, and Close leaves the log based on its revision.
	mustPut(t, s, "a", "1")
	mustPut(t, s, "b", "2")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	path := s.Path()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := openWAL(path+walSuffix, true)
	if err != nil {
		t.Fatal(err)
	}
	base, end := w.replay(func([]walRecord) {})
	if base.rev != 3 {
		t.Fatalf("the log's base after Close is %d; want 3", base.rev)
	}
	w.off = end
	if err := w.appendBatch([]walRecord{{key: revBytes(kv.Revision{Main: base.rev + 1}, false), value: []byte("garbage")}}); err != nil {
		t.Fatal(err)
	}
	w.close()
	if _, err := Open(path, nil, nil, Options{NoFsync: true}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Open with a garbled record in the log = %v; want ErrCorrupt", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Fatal("the refused Open changed the file")
	}
	if err := os.Remove(path + walSuffix); err != nil {
		t.Fatal(err)
	}
	c, err := Open(path, nil, nil, Options{NoFsync: true})
	if err != nil {
		t.Fatalf("Open without the log = %v", err)
	}
	c.Close()
}

// TestLogQuota checks that the quota counts what batches acknowledged
// from the log add, before a checkpoint puts it in the file.
func TestLogQuota(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "db"), nil, nil, Options{QuotaBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.checkpointEvery = time.Hour
	val := bytes.Repeat([]byte("x"), 20<<10)
	for i := range 200 {
		_, err := s.Put(kv.PutRequest{Key: []byte{byte(i)}, Value: val})
		if errors.Is(err, kv.ErrNoSpace) {
			if i < 20 {
				t.Fatalf("put %d refused for space under a 1 MiB quota; want about 40 accepted", i)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("200 puts of 20 KiB accepted under a 1 MiB quota")
}

// TestLogReadOnly opens a killed store's file read-only: it reads the
// batches of the log too and changes neither file, and refuses a
// snapshot, which would copy the file without them.
func TestLogReadOnly(t *testing.T) {
	s := openLogged(t, filepath.Join(t.TempDir(), "db"))
	defer s.Close()
	mustPut(t, s, "a", "1")
	mustPut(t, s, "b", "2")
	dst := crashCopy(t, s)
	before, _ := os.ReadFile(dst)
	beforeLog, _ := os.ReadFile(dst + walSuffix)
	r, err := Open(dst, nil, nil, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	rev, got := dump(t, r)
	if rev != 3 || got != "a=1 c2 m2 v1\nb=2 c3 m3 v1\n" {
		t.Fatalf("read-only with the log: revision %d\n%s", rev, got)
	}
	if _, err := r.Snapshot(); err == nil || !strings.Contains(err.Error(), "write-ahead log") {
		t.Fatalf("Snapshot of a read-only store with batches in its log = %v; want refused", err)
	}
	r.Close()
	after, _ := os.ReadFile(dst)
	afterLog, _ := os.ReadFile(dst + walSuffix)
	if !bytes.Equal(before, after) || !bytes.Equal(beforeLog, afterLog) {
		t.Fatal("a read-only Open changed the file or its log")
	}
}

// checkpointNow puts every batch acknowledged from the log in bbolt, so
// that no checkpoint runs later, in the background of what a test
// measures.
func checkpointNow(tb testing.TB, s *Store) {
	tb.Helper()
	if _, err := s.submit(&request{exclusive: func() error { return nil }}); err != nil {
		tb.Fatal(err)
	}
	if s.pending.Load() != nil {
		tb.Fatal("records still pending after a checkpoint")
	}
}

// TestLogBoundsPending writes far more than the log holds with no
// checkpoint due by time: the records pending in memory never exceed
// the log's size, because a batch that does not fit makes a checkpoint.
func TestLogBoundsPending(t *testing.T) {
	s := openLogged(t, filepath.Join(t.TempDir(), "db"))
	defer s.Close()
	value := bytes.Repeat([]byte("v"), 8<<10)
	most := 0
	for i := range 1000 { // 8 MiB of values, 8 times the log
		if _, err := s.Put(kv.PutRequest{Key: fmt.Appendf(nil, "k%04d", i), Value: value}); err != nil {
			t.Fatal(err)
		}
		held := 0
		if p := s.pending.Load(); p != nil {
			for _, r := range *p {
				held += len(r.key) + len(r.value)
			}
		}
		most = max(most, held)
	}
	if most > walBytes {
		t.Fatalf("%d bytes of records pending at most; want at most the log's %d", most, walBytes)
	}
	if most < walBytes/2 {
		t.Fatalf("%d bytes of records pending at most: the puts were not logged", most)
	}
}

// TestFailedTombstoneLeavesNothing: a tombstone the index refuses (its
// key is not live) leaves no record in the history, nor in the log,
// although no event of the write is there for rollback to undo. A batch
// that wrote nothing used to roll bbolt's whole transaction back; with
// the transaction kept open across logged batches, the stray record
// reached the file at the next checkpoint, beside the next write's
// record of the same revision.
func TestFailedTombstoneLeavesNothing(t *testing.T) {
	s := openLogged(t, filepath.Join(t.TempDir(), "db"))
	defer s.Close()
	mustPut(t, s, "a", "1") // checkpoints
	mustPut(t, s, "a", "2") // logged: the write transaction stays open
	_, err := s.Write(func(wt *WriteTxn) error {
		if err := wt.writeKV(kv.KeyValue{Key: []byte("never")}, true); err != nil {
			return err
		}
		if len(wt.logged) != 0 {
			t.Errorf("the refused tombstone is still to be logged: %d records", len(wt.logged))
		}
		return nil
	})
	if err == nil {
		t.Fatal("a tombstone of a key never written succeeded")
	}
	mustPut(t, s, "b", "2")
	checkpointNow(t, s)
	var recs []string
	if err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(keyBucket).ForEach(func(k, _ []byte) error {
			rev, tomb, err := parseRevBytes(k)
			recs = append(recs, fmt.Sprintf("%d/%d tombstone=%v %v", rev.Main, rev.Sub, tomb, err))
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(recs, " "); got != "2/0 tombstone=false <nil> 3/0 tombstone=false <nil> 4/0 tombstone=false <nil>" {
		t.Fatalf("history records: %s; want the three puts alone", got)
	}
}
