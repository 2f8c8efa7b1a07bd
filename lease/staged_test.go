package lease

import (
	"errors"
	"testing"

	"github.com/httpkv/httpkv/kv"
)

// fakeTxn is a store write whose staged changes wait for the test to
// commit or fail them, as the store's committer does after the batch.
type fakeTxn struct {
	applies, undos []func()
}

func (*fakeTxn) UnsafePut(bucket, key, value []byte) error { return nil }
func (*fakeTxn) UnsafeDelete(bucket, key []byte) error     { return nil }
func (*fakeTxn) LeaseKeys(int64) ([][]byte, error)         { return nil, nil }

func (t *fakeTxn) Stage(apply, undo func()) {
	t.applies = append(t.applies, apply)
	t.undos = append(t.undos, undo)
}

func (t *fakeTxn) commit() {
	for _, f := range t.applies {
		f()
	}
}

func (t *fakeTxn) fail() {
	for i := len(t.undos) - 1; i >= 0; i-- {
		t.undos[i]()
	}
}

// TestStagedLeasesSeenByTheBatchOnly checks the two views of a lease:
// the open batch's (Lookup, Status, Grant and Revoke checks) sees a grant
// or a revoke at once; every other reader (TimeToLive, Leases) once it is
// committed; and a failed write leaves both as they were.
func TestStagedLeasesSeenByTheBatchOnly(t *testing.T) {
	l := New(Config{})
	defer l.Close()
	if err := l.Restore(func([]byte, func(k, v []byte) error) error { return nil }); err != nil {
		t.Fatal(err)
	}
	tx := &fakeTxn{}
	if _, err := l.Grant(tx, 7, 60); err != nil {
		t.Fatalf("Grant(7) = %v", err)
	}
	if !l.Lookup(7) {
		t.Fatal("Lookup(7) after a staged grant = false, want true for the batch")
	}
	if _, err := l.TimeToLive(7, false); !errors.Is(err, kv.ErrLeaseNotFound) {
		t.Fatalf("TimeToLive(7) before the grant is committed = %v, want kv.ErrLeaseNotFound", err)
	}
	if _, err := l.Grant(tx, 7, 60); !errors.Is(err, kv.ErrLeaseExists) {
		t.Fatalf("Grant(7) again in the batch = %v, want kv.ErrLeaseExists", err)
	}
	if st, err := l.Status(tx, 7); err != nil || st.Remaining != 60 {
		t.Fatalf("Status(7) in the batch = %+v, %v, want 60s left", st, err)
	}
	// Revoked and granted again in the same batch: the last one holds.
	if err := l.Revoke(tx, 7); err != nil {
		t.Fatalf("Revoke(7) = %v", err)
	}
	if l.Lookup(7) {
		t.Fatal("Lookup(7) after a staged revoke = true, want false")
	}
	if _, err := l.Grant(tx, 7, 90); err != nil {
		t.Fatalf("Grant(7) after its revoke = %v", err)
	}
	tx.commit()
	if st, err := l.TimeToLive(7, false); err != nil || st.TTL != 90 {
		t.Fatalf("TimeToLive(7) once committed = %+v, %v, want TTL 90", st, err)
	}
	if len(l.staged) != 0 {
		t.Fatalf("staged after the commit = %v, want nothing", l.staged)
	}

	failed := &fakeTxn{}
	if _, err := l.Grant(failed, 8, 60); err != nil {
		t.Fatalf("Grant(8) = %v", err)
	}
	if err := l.Revoke(failed, 7); err != nil {
		t.Fatalf("Revoke(7) = %v", err)
	}
	failed.fail()
	if l.Lookup(8) || !l.Lookup(7) || len(l.staged) != 0 {
		t.Fatalf("after a failed write: Lookup(8) = %v, Lookup(7) = %v, staged %v; want false, true, nothing", l.Lookup(8), l.Lookup(7), l.staged)
	}
	if got := l.Leases(); len(got) != 1 || got[0] != 7 {
		t.Fatalf("Leases() = %v, want [7]", got)
	}
}
