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
	s, err := mvcc.Open(filepath.Join(t.TempDir(), "db"), l, nil, mvcc.Options{NoFsync: true, QuotaBytes: 1})
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

// TestMaxLeases: past MaxLeases a grant fails with kv.ErrTooManyLeases
// and writes nothing, grants of one batch counted before they commit;
// a revoke makes room again; leases restored past the bound are all
// kept, and grants refused until enough go.
func TestMaxLeases(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	e := openEnv(t, path, lease.Config{MaxLeases: 3})
	// Three grants in one write: the third and fourth see the first two
	// staged, not yet committed.
	var errs []error
	_, err := storeWriter{e.store}.Write(func(tx lease.WriteTxn) error {
		for id := int64(1); id <= 4; id++ {
			_, err := e.lessor.Grant(tx, id, 60)
			errs = append(errs, err)
		}
		return nil
	})
	if err != nil || errs[2] != nil || !errors.Is(errs[3], kv.ErrTooManyLeases) {
		t.Fatalf("four grants in one write with MaxLeases 3: %v, %v; want the fourth refused", errs, err)
	}
	rev := e.store.Rev()
	if _, err := e.manager.Grant(0, 60); !errors.Is(err, kv.ErrTooManyLeases) {
		t.Fatalf("Grant past MaxLeases = %v, want kv.ErrTooManyLeases", err)
	}
	if got := e.lessor.Leases(); !slices.Equal(got, []int64{1, 2, 3}) || e.store.Rev() != rev {
		t.Fatalf("after the refused grant: leases %v at revision %d, want [1 2 3] at %d", got, e.store.Rev(), rev)
	}
	if _, err := e.manager.Revoke(2, nil); err != nil {
		t.Fatal(err)
	}
	mustGrant(t, e, 9, 60)
	e.close()

	e = openEnv(t, path, lease.Config{MaxLeases: 2})
	if got := e.lessor.Count(); got != 3 {
		t.Fatalf("restored %d leases past MaxLeases 2, want all 3", got)
	}
	if _, err := e.manager.Grant(0, 60); !errors.Is(err, kv.ErrTooManyLeases) {
		t.Fatalf("Grant with 3 restored leases and MaxLeases 2 = %v, want kv.ErrTooManyLeases", err)
	}
}

// TestLeasePages: Page lists the leases by ascending ID, at most limit at
// a time, from after the last ID of the page before, and says whether
// more follow.
func TestLeasePages(t *testing.T) {
	e := newEnv(t, lease.Config{})
	ids := []int64{lease.MaxID, 1, 700, 5, 12, 6}
	for _, id := range ids {
		mustGrant(t, e, id, 60)
	}
	if _, err := e.manager.Revoke(12, nil); err != nil {
		t.Fatal(err)
	}
	want := []int64{1, 5, 6, 700, lease.MaxID}
	for limit := 1; limit <= 6; limit++ {
		var got []int64
		var after int64
		for pages := 0; ; pages++ {
			page, more := e.manager.Page(after, limit)
			if len(page) > limit || pages > len(want) {
				t.Fatalf("Page(%d, %d) = %v", after, limit, page)
			}
			got = append(got, page...)
			if !more {
				break
			}
			after = page[len(page)-1]
		}
		if !slices.Equal(got, want) {
			t.Errorf("pages of %d: %v, want %v", limit, got, want)
		}
	}
	if n := e.manager.Count(); n != len(want) {
		t.Errorf("Count() = %d, want %d", n, len(want))
	}
}
