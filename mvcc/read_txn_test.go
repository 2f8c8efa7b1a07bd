package mvcc

import (
	"sync"
	"testing"

	"github.com/httpkv/httpkv/kv"
)

// openReadTxns counts the store's open bbolt read transactions.
func openReadTxns(s *Store) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.db.Stats().OpenTxN
}

func readValue(t *testing.T, r *ReadTxn, key string) string {
	t.Helper()
	res, err := r.Range([]byte(key), nil, kv.RangeOptions{})
	if err != nil || len(res.KVs) != 1 {
		t.Fatalf("Range(%q) at %d = %d keys, %v; want 1", key, r.Rev(), len(res.KVs), err)
	}
	return string(res.KVs[0].Value)
}

// TestReadsShareOneTransaction checks that reads of one revision share a
// bbolt read transaction, that a read begun after a write is
// acknowledged sees it (it does not join the older transaction), and
// that a read begun before keeps its snapshot.
func TestReadsShareOneTransaction(t *testing.T) {
	s := openTestStore(t, Options{NoFsync: true})
	mustPut(t, s, "k", "one")

	a, err := s.Read()
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Read()
	if err != nil {
		t.Fatal(err)
	}
	if a.tx != b.tx {
		t.Errorf("two reads at revision %d began two transactions", a.Rev())
	}
	if n := openReadTxns(s); n != 1 {
		t.Errorf("%d read transactions open for two reads of one revision; want 1", n)
	}

	mustPut(t, s, "k", "two")
	c, err := s.Read()
	if err != nil {
		t.Fatal(err)
	}
	if c.tx == a.tx {
		t.Fatal("a read begun after a write joined the transaction of the revision before it")
	}
	if got := readValue(t, c, "k"); got != "two" {
		t.Errorf("read after the write = %q; want \"two\"", got)
	}
	if got := readValue(t, a, "k"); got != "one" {
		t.Errorf("read begun before the write = %q; want \"one\"", got)
	}
	a.End()
	b.End()
	c.End()
}

// TestCommitRetiresSharedRead checks that no shared read transaction is
// open, read or not, once a commit has begun: a commit that grows the
// file remaps it, which waits for every open read transaction, and a
// shared one that no read is using would never be rolled back.
func TestCommitRetiresSharedRead(t *testing.T) {
	s := openTestStore(t, Options{NoFsync: true})
	mustPut(t, s, "k", "v")
	r, err := s.Read()
	if err != nil {
		t.Fatal(err)
	}
	r.End()
	if n := openReadTxns(s); n != 1 {
		t.Fatalf("%d read transactions open after a read ended; want the shared one", n)
	}
	sawOpen := make(chan int, 1)
	s.committer = committerFunc(func(commit func() error) error {
		select {
		case sawOpen <- openReadTxns(s):
		default:
		}
		return commit()
	})
	// A write outside the key history is committed to bbolt at once;
	// a put would be acknowledged from the log.
	if _, err := s.Write(func(wt *WriteTxn) error {
		return wt.UnsafePut([]byte("other"), []byte("k"), []byte("w"))
	}); err != nil {
		t.Fatal(err)
	}
	if n := <-sawOpen; n != 0 {
		t.Errorf("%d read transactions open as the commit began; want 0", n)
	}
}

type committerFunc func(commit func() error) error

func (f committerFunc) Commit(commit func() error) error { return f(commit) }

// TestSharedReadsUnderWrites reads while writers commit, with -race: every
// read sees a value at least as new as the last write acknowledged
// before it began, and every transaction is rolled back in the end.
func TestSharedReadsUnderWrites(t *testing.T) {
	s := openTestStore(t, Options{NoFsync: true})
	mustPut(t, s, "k", "0")
	var (
		mu    sync.Mutex
		acked int64
		wg    sync.WaitGroup
	)
	wg.Go(func() {
		for range 300 {
			r, err := s.Put(kv.PutRequest{Key: []byte("k"), Value: []byte("x")})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			acked = max(acked, r.Revision)
			mu.Unlock()
		}
	})
	for range 4 {
		wg.Go(func() {
			for range 500 {
				mu.Lock()
				floor := acked
				mu.Unlock()
				r, err := s.Read()
				if err != nil {
					t.Error(err)
					return
				}
				res, err := r.Range([]byte("k"), nil, kv.RangeOptions{})
				r.End()
				if err != nil || len(res.KVs) != 1 {
					t.Errorf("Range = %d keys, %v", len(res.KVs), err)
					return
				}
				if res.KVs[0].ModRevision < floor {
					t.Errorf("read saw revision %d after revision %d was acknowledged", res.KVs[0].ModRevision, floor)
					return
				}
			}
		})
	}
	wg.Wait()
	s.dropSharedRead()
	if n := openReadTxns(s); n != 0 {
		t.Errorf("%d read transactions left open once every read ended", n)
	}
}
