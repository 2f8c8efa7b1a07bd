package mvcc

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/mvcc/mvcctest"
)

// recorder is an Observer that keeps what it was told, and checks that
// it is told on the committer before the writers are answered: each
// batch must be readable (durable) when published.
type recorder struct {
	s     *Store
	start int64 // the store's revision when the observer was registered

	mu      sync.Mutex
	changes []kv.Changes
	errs    []error
}

func (r *recorder) Publish(changes []kv.Changes) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ch := range changes {
		if got := r.s.Rev(); got < ch.Revision {
			r.errs = append(r.errs, fmt.Errorf("revision %d published while Rev() = %d", ch.Revision, got))
		}
		r.changes = append(r.changes, ch)
	}
}

// seen returns the newest revision published.
func (r *recorder) seen() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.changes) == 0 {
		return 0
	}
	return r.changes[len(r.changes)-1].Revision
}

// check compares what was published with the store's history (what is
// left of it after compactions): every revision once, in order, with its
// events.
func (r *recorder) check(tb testing.TB) {
	tb.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, err := range r.errs {
		tb.Error(err)
	}
	var want []string
	compact, err := r.s.ReadHistory(r.start+1, r.s.Rev(), func(ev kv.Event) bool {
		want = append(want, showObserved(ev))
		return true
	})
	if err != nil {
		tb.Fatalf("ReadHistory = %v", err)
	}
	var got []string
	for i, ch := range r.changes {
		if i > 0 && ch.Revision != r.changes[i-1].Revision+1 {
			tb.Errorf("published revision %d after %d: revisions are contiguous", ch.Revision, r.changes[i-1].Revision)
		}
		for _, ev := range ch.Events {
			if ev.KV.ModRevision != ch.Revision {
				tb.Errorf("revision %d published an event of revision %d", ch.Revision, ev.KV.ModRevision)
			}
			if ev.KV.ModRevision >= compact {
				got = append(got, showObserved(ev))
			}
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		tb.Errorf("published %q, want the history %q", got, want)
	}
}

func showObserved(ev kv.Event) string {
	return fmt.Sprintf("%v %s=%s@%d", ev.Type, ev.KV.Key, ev.KV.Value, ev.KV.ModRevision)
}

func observeStore(tb testing.TB, s *Store) *recorder {
	tb.Helper()
	r, err := Observe(s, func(rev int64) *recorder {
		if rev != s.Rev() {
			tb.Errorf("Observe started at %d, want the store's revision %d", rev, s.Rev())
		}
		return &recorder{s: s, start: rev}
	})
	if err != nil {
		tb.Fatalf("Observe = %v", err)
	}
	return r
}

// TestEveryWriteReachesObservers writes through every exported write
// path of the store and checks that each revision reaches the observer,
// once, in order, before the writer has its answer; and that the paths
// that write no key (compaction, alarms, defrag, a read-only txn, state
// beside the history) publish nothing.
func TestEveryWriteReachesObservers(t *testing.T) {
	s := openTestStore(t, Options{})
	if _, err := s.Put(kv.PutRequest{Key: []byte("before"), Value: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	r := observeStore(t, s)
	answered := func(what string, rev int64, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s = %v", what, err)
		}
		if got := r.seen(); got != rev {
			t.Fatalf("%s answered revision %d, observer at %d: it must be told first", what, rev, got)
		}
	}
	put, err := s.Put(kv.PutRequest{Key: []byte("a"), Value: []byte("1")})
	answered("Put", put.Revision, err)
	txn, err := s.Txn(kv.TxnRequest{Success: []kv.Op{
		{Put: &kv.PutRequest{Key: []byte("b"), Value: []byte("2")}},
		{Delete: &kv.DeleteRequest{Key: []byte("a")}},
	}})
	answered("Txn", txn.Revision, err)
	del, err := s.DeleteRange(kv.DeleteRequest{Key: []byte("b"), End: []byte{0}})
	answered("DeleteRange", del.Revision, err)
	ch, err := s.Write(func(tx *WriteTxn) error {
		_, err := tx.Put(kv.PutRequest{Key: []byte("c"), Value: []byte("3")})
		return err
	})
	answered("Write", ch.Revision, err)
	applied, err := Apply(s, func(tx *WriteTxn) (kv.PutResult, error) {
		return tx.Put(kv.PutRequest{Key: []byte("d"), Value: []byte("4")})
	})
	answered("Apply", applied.Revision, err)
	r.check(t)

	// What writes no key publishes nothing.
	rev := s.Rev()
	if _, err := s.Txn(kv.TxnRequest{Success: []kv.Op{{Range: &kv.RangeOp{Key: []byte("a")}}}}); err != nil {
		t.Fatalf("read-only Txn = %v", err)
	}
	if _, err := s.Write(func(tx *WriteTxn) error { return tx.UnsafePut([]byte("side"), []byte("k"), []byte("v")) }); err != nil {
		t.Fatalf("Write of state beside the history = %v", err)
	}
	done, err := s.Compact(rev)
	if err != nil {
		t.Fatalf("Compact(%d) = %v", rev, err)
	}
	if err := <-done; err != nil {
		t.Fatalf("compaction = %v", err)
	}
	if err := s.DisarmNoSpace(); err != nil {
		t.Fatalf("DisarmNoSpace = %v", err)
	}
	if err := s.Defrag(); err != nil {
		t.Fatalf("Defrag = %v", err)
	}
	if got := r.seen(); got != rev || s.Rev() != rev {
		t.Fatalf("after writes of no key: observer at %d, store at %d, want both at %d", got, s.Rev(), rev)
	}
	// A write after them still arrives.
	put, err = s.Put(kv.PutRequest{Key: []byte("e"), Value: []byte("5")})
	answered("Put after compaction and defrag", put.Revision, err)

	r.mu.Lock()
	first := r.changes[0].Revision
	r.mu.Unlock()
	if first != 3 || r.start != 2 {
		t.Errorf("observer started at %d and was first told of %d, want 2 and 3: the put before Observe is not its", r.start, first)
	}
	r.check(t)
}

// TestConcurrentWritesReachObserversInOrder: writers racing each other
// make batches of many requests; the observer still sees every revision
// once, in order, each before its writer is answered.
func TestConcurrentWritesReachObserversInOrder(t *testing.T) {
	s := openTestStore(t, Options{})
	r := observeStore(t, s)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 50 {
				key := fmt.Appendf(nil, "w%d/%d", w, i%5)
				var rev int64
				var err error
				switch i % 3 {
				case 0, 1:
					var res kv.PutResult
					res, err = s.Put(kv.PutRequest{Key: key, Value: fmt.Appendf(nil, "%d", i)})
					rev = res.Revision
				default:
					var res kv.DeleteResult
					res, err = s.DeleteRange(kv.DeleteRequest{Key: key})
					rev = res.Revision
				}
				if err != nil {
					t.Errorf("write = %v", err)
					return
				}
				if got := r.seen(); got < rev {
					t.Errorf("write answered at %d, observer at %d", rev, got)
				}
			}
		})
	}
	wg.Wait()
	r.check(t)
}

// TestFailedCommitPublishesNothing: a batch whose commit fails reaches no
// observer, and its writers get the error.
func TestFailedCommitPublishesNothing(t *testing.T) {
	var faults mvcctest.Committer
	s := openTestStoreWith(t, nil, &faults, Options{})
	r := observeStore(t, s)
	if _, err := s.Put(kv.PutRequest{Key: []byte("a"), Value: []byte("1")}); err != nil {
		t.Fatal(err)
	}
	faults.Set(mvcctest.After)
	if _, err := s.Put(kv.PutRequest{Key: []byte("b"), Value: []byte("2")}); !errors.Is(err, kv.ErrBackendFailed) {
		t.Fatalf("Put with a failing commit = %v, want kv.ErrBackendFailed", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.changes) != 1 || r.changes[0].Revision != 2 {
		t.Fatalf("published %+v, want only revision 2", r.changes)
	}
}
