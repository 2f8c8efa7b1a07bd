package mvcc

import (
	"errors"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/mvcc/mvcctest"
)

// TestCommitFailureKeepsCompactRev fails the commit of a compaction: the
// compact revision stays where the file has it, reads below the requested
// revision keep working, and a reopened store agrees.
func TestCommitFailureKeepsCompactRev(t *testing.T) {
	for _, mode := range []int32{mvcctest.Before, mvcctest.After} {
		path := filepath.Join(t.TempDir(), "db")
		var faults mvcctest.Committer
		s, err := Open(path, nil, &faults, Options{NoFsync: true})
		if err != nil {
			t.Fatalf("Open() = %v", err)
		}
		for _, v := range []string{"1", "2", "3"} {
			if _, err := s.Put(kv.PutRequest{Key: []byte("k"), Value: []byte(v)}); err != nil {
				t.Fatalf("Put(k=%s) = %v", v, err)
			}
		}
		faults.Set(mode)
		if _, err := s.Compact(3); !errors.Is(err, kv.ErrBackendFailed) {
			t.Fatalf("mode %d: Compact(3) with a failing commit = %v, want ErrBackendFailed", mode, err)
		}
		if got := s.CompactRev(); got != 0 {
			t.Fatalf("mode %d: CompactRev() after the failed Compact(3) = %d, want 0", mode, got)
		}
		res, err := s.Range([]byte("k"), nil, kv.RangeOptions{Revision: 2})
		if err != nil || len(res.KVs) != 1 || string(res.KVs[0].Value) != "1" {
			t.Fatalf("mode %d: Range(k, rev=2) after the failed compaction = %+v, %v, want k=1", mode, res, err)
		}
		s.Close()

		s, err = Open(path, nil, nil, Options{NoFsync: true})
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		want := int64(0)
		if mode == mvcctest.After {
			want = 3 // the schedule reached the file
		}
		if got := s.CompactRev(); got != want {
			t.Errorf("mode %d: CompactRev() after a reopen = %d, want %d", mode, got, want)
		}
		s.Close()
	}
}

// gate is a Committer that holds the first commit until released, so that
// the requests sent meanwhile queue up and run as one batch.
type gate struct {
	entered, release chan struct{}
	first            bool
}

func newGate() *gate {
	return &gate{entered: make(chan struct{}), release: make(chan struct{}), first: true}
}

func (g *gate) Commit(commit func() error) error {
	if g.first { // only the committer goroutine calls Commit
		g.first = false
		close(g.entered)
		<-g.release
	}
	return commit()
}

// batch runs the writes as one batch, in order: it holds a commit, queues
// them one by one, then lets the committer go. It returns their errors.
func batch(tb testing.TB, s *Store, g *gate, writes ...func(*WriteTxn) error) []error {
	tb.Helper()
	go func() { _, _ = s.Put(kv.PutRequest{Key: []byte("held"), Value: []byte("v")}) }()
	<-g.entered
	errs := make([]error, len(writes))
	done := make(chan int, len(writes))
	for i, w := range writes {
		go func() {
			_, errs[i] = s.Write(w)
			done <- i
		}()
		for len(s.queue) != i+1 {
			runtime.Gosched()
		}
	}
	close(g.release)
	for range writes {
		<-done
	}
	return errs
}

// TestBatchSeesEarlierRequestsStagedState runs requests that depend on
// what an earlier request of the same batch staged, not yet committed
// when they run: the keys it attached to a lease, the compaction it
// scheduled.
func TestBatchSeesEarlierRequestsStagedState(t *testing.T) {
	g := newGate()
	l := newFakeLessor(1)
	s := openTestStoreWith(t, l, g, Options{})
	var seen [][]byte
	errs := batch(t, s, g,
		func(tx *WriteTxn) error { _, err := tx.Put(kv.PutRequest{Key: []byte("a"), Lease: 1}); return err },
		func(tx *WriteTxn) error { _, err := tx.Put(kv.PutRequest{Key: []byte("b"), Lease: 1}); return err },
		func(tx *WriteTxn) error {
			_, err := tx.DeleteRange(kv.DeleteRequest{Key: []byte("a")})
			return err
		},
		func(tx *WriteTxn) error {
			var err error
			seen, err = tx.LeaseKeys(1)
			return err
		},
		func(tx *WriteTxn) error { return s.compactIn(tx, 3) },
		func(tx *WriteTxn) error { return s.compactIn(tx, 2) },
	)
	for i, err := range errs[:5] {
		if err != nil {
			t.Fatalf("write %d of the batch = %v", i, err)
		}
	}
	if got := keyStrings(seen); !slices.Equal(got, []string{"b"}) {
		t.Errorf("LeaseKeys(1) after the batch put a and b with lease 1 and deleted a = %q, want [b]", got)
	}
	var ce *kv.CompactedError
	if !errors.As(errs[5], &ce) || ce.CompactRevision != 3 {
		t.Errorf("compacting at 2 after 3 in one batch = %v, want compacted at 3", errs[5])
	}
	if got := s.CompactRev(); got != 3 {
		t.Errorf("CompactRev() after the batch = %d, want 3", got)
	}
	if got := l.String(); got != `1:["b"] ` {
		t.Errorf("leases after the batch = %s, want 1:[\"b\"]", got)
	}
}

func keyStrings(keys [][]byte) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = string(k)
	}
	return out
}
