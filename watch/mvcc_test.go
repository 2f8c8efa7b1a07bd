package watch

import (
	"testing"

	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/mvcc"
)

// The embedded store is a History the scheduler catches up from.
var _ History = (*mvcc.Store)(nil)

// testStore is a scheduler over an mvcc store, wired as backend/embedded
// wires them: the store publishes every commit to it, and it catches
// watchers up from the store's history. Writes go to the store.
type testStore struct {
	*Store
	kv *mvcc.Store
}

// observe starts a scheduler observing the store's commits.
func observe(tb testing.TB, s *mvcc.Store, opts Options) *testStore {
	tb.Helper()
	ws, err := mvcc.Observe(s, func(rev int64) *Store { return New(s, rev, opts) })
	if err != nil {
		tb.Fatalf("mvcc.Observe: %v", err)
	}
	return &testStore{Store: ws, kv: s}
}

func (s *testStore) KV() *mvcc.Store { return s.kv }

func (s *testStore) Write(fn func(*mvcc.WriteTxn) error) (kv.Changes, error) { return s.kv.Write(fn) }

func (s *testStore) Put(r kv.PutRequest) (kv.PutResult, error) { return s.kv.Put(r) }

func (s *testStore) DeleteRange(r kv.DeleteRequest) (kv.DeleteResult, error) {
	return s.kv.DeleteRange(r)
}

func (s *testStore) Txn(r kv.TxnRequest) (kv.TxnResult, error) { return s.kv.Txn(r) }
