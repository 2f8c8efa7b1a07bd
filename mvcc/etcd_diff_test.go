package mvcc

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/httpkv/httpkv/internal/etcddiff"
	"github.com/httpkv/httpkv/kv"
)

// TestEtcdDiff runs seeded random sequences of puts, deletes, txns,
// compactions and ranges against a real etcd and against a Store, and
// fails on the first answer that differs (package etcddiff says what is
// compared, and what the sequences leave out). Each seed gets a fresh
// etcd and a fresh store, so the revisions of both line up; rerun one
// with -run 'TestEtcdDiff/seed=N'.
func TestEtcdDiff(t *testing.T) {
	const steps = 400
	// Seeds 14 and 37 make txns with both kinds of failing op (see
	// etcddiff on etcd before 3.6).
	for _, seed := range []uint64{1, 2, 3, 4, 5, 6, 14, 37} {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			etcd := etcddiff.StartEtcd(t)
			s, err := Open(filepath.Join(t.TempDir(), "db"), nil, nil, Options{NoFsync: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			store := diffStore{s}
			d := &etcddiff.Differ{Want: etcd, Got: store}
			gen := etcddiff.NewGen(seed, store, DefaultMaxTxnOps)
			for step := range steps {
				if err := d.Step(gen.Step()); err != nil {
					t.Fatalf("seed %d step %d: %v", seed, step, err)
				}
			}
			// The whole keyspace at every revision still readable, then
			// one below it.
			if err := d.Sweep(max(s.CompactRev()-1, 1), s.Rev()); err != nil {
				t.Fatalf("seed %d sweep: %v", seed, err)
			}
			t.Logf("outcomes: %v", d.Outcomes)
		})
	}
}

// diffStore is a Store as TestEtcdDiff compares it with etcd, and the
// state its sequences are made from.
type diffStore struct{ s *Store }

func (d diffStore) Rev() int64        { return d.s.Rev() }
func (d diffStore) CompactRev() int64 { return d.s.CompactRev() }

func (d diffStore) Get(key []byte) (kv.KeyValue, bool) {
	rr, err := d.s.Range(key, nil, kv.RangeOptions{})
	if err != nil || len(rr.KVs) != 1 {
		return kv.KeyValue{}, false
	}
	return rr.KVs[0], true
}

func (d diffStore) Range(key, end []byte, o kv.RangeOptions) (kv.RangeResult, error) {
	return d.s.Range(key, end, o)
}

func (d diffStore) Put(r kv.PutRequest) (kv.PutResult, error) { return d.s.Put(r) }

func (d diffStore) Delete(r kv.DeleteRequest) (kv.DeleteResult, error) { return d.s.DeleteRange(r) }

func (d diffStore) Txn(r kv.TxnRequest) (kv.TxnResult, error) { return d.s.Txn(r) }

// Compact compacts and waits for the compaction to finish, then answers
// the store's revision, as etcd's header does.
func (d diffStore) Compact(rev int64) (int64, error) {
	done, err := d.s.Compact(rev)
	if err != nil {
		return 0, err
	}
	if err := <-done; err != nil {
		return 0, fmt.Errorf("compaction at %d finished with %w", rev, err)
	}
	return d.s.Rev(), nil
}
