package lease_test

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/lease"
	"github.com/httpkv/httpkv/mvcc"
)

// TestRevokeRefusedChangesNothing: a revoke whose check refuses the keys
// about to go deletes nothing and leaves the lease, and the check sees
// every key attached, those of the last write included.
func TestRevokeRefusedChangesNothing(t *testing.T) {
	e := newEnv(t, lease.Config{})
	mustGrant(t, e, 1, 60)
	mustPut(t, e, leasedPut("a", 1))
	mustPut(t, e, leasedPut("b", 1))
	rev := e.store.Rev()
	refused := errors.New("refused")
	var seen []string
	_, err := e.manager.Revoke(1, func(keys [][]byte) error {
		seen = strs(keys)
		return refused
	})
	if !errors.Is(err, refused) {
		t.Fatalf("Revoke(1) with a refusing check = %v, want its error", err)
	}
	if !slices.Equal(seen, []string{"a", "b"}) {
		t.Errorf("the check saw %q, want [a b]", seen)
	}
	if got := liveKeys(t, e.store); !slices.Equal(got, []string{"a", "b"}) || e.store.Rev() != rev {
		t.Errorf("after a refused revoke: keys %q at revision %d, want [a b] at %d", got, e.store.Rev(), rev)
	}
	if !e.lessor.Lookup(1) || !slices.Equal(keysOf(t, e.lessor, 1), []string{"a", "b"}) {
		t.Errorf("after a refused revoke the lease is gone or lost keys")
	}
}

// TestGrantUnderNoSpace: a grant adds a record, so it is refused once the
// NOSPACE alarm is active, as in etcd, and raises the alarm itself when
// the record would pass the quota.
func TestGrantUnderNoSpace(t *testing.T) {
	l := lease.New(lease.Config{})
	defer l.Close()
	s, err := mvcc.Open(filepath.Join(t.TempDir(), "db"), mvcc.Options{NoFsync: true, Lessor: l, QuotaBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := lease.NewManager(l, storeWriter{s}, nil)
	defer m.Close()
	for i := range 2 {
		if _, err := m.Grant(0, 60); !errors.Is(err, kv.ErrNoSpace) {
			t.Fatalf("Grant #%d past the quota = %v, want kv.ErrNoSpace", i, err)
		}
	}
	if got := s.Alarms(); !slices.Equal(got, []kv.Alarm{kv.AlarmNoSpace}) {
		t.Fatalf("Alarms() after a grant past the quota = %v, want [NOSPACE]", got)
	}
	if got := l.Leases(); len(got) != 0 {
		t.Fatalf("Leases() after refused grants = %v, want none", got)
	}
}

// TestManagerCloseIsIdempotent: Close stops the loop once; later calls
// return at once, and the manager still grants.
func TestManagerCloseIsIdempotent(t *testing.T) {
	e := newEnv(t, lease.Config{})
	m := lease.NewManager(e.lessor, storeWriter{e.store}, nil)
	m.Close()
	m.Close()
	if _, err := m.Grant(5, 60); err != nil {
		t.Fatalf("Grant after Close = %v", err)
	}
}
