package lease_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/lease"
	"github.com/httpkv/httpkv/mvcc"
	"github.com/httpkv/httpkv/mvcc/mvcctest"
)

// leaseState is what a lessor says of leases 1 to 3: each one's
// existence, granted TTL and attached keys.
func leaseState(tb testing.TB, l *lease.Lessor) string {
	tb.Helper()
	var s string
	for id := int64(1); id <= 3; id++ {
		st, err := l.TimeToLive(id, true)
		switch {
		case errors.Is(err, kv.ErrLeaseNotFound):
			s += fmt.Sprintf("%d:none ", id)
		case err != nil:
			tb.Fatalf("TimeToLive(%d) = %v", id, err)
		default:
			s += fmt.Sprintf("%d:ttl=%d keys=%q ", id, st.TTL, strs(st.Keys))
		}
	}
	return s + fmt.Sprint(l.Leases())
}

// TestCommitFailureLeavesLeasesAsOnDisk fails the commit of each kind of
// write that changes leases (grant, revoke, attach, move, detach by put
// and by delete) and checks that the lessor's memory is still what the
// file holds: what it was before the write, and what a restart reads.
func TestCommitFailureLeavesLeasesAsOnDisk(t *testing.T) {
	cases := []struct {
		name  string
		write func(e *env) error
	}{
		{"grant", func(e *env) error { _, err := e.manager.Grant(3, 60); return err }},
		{"revoke", func(e *env) error { _, err := e.manager.Revoke(1, nil); return err }},
		{"attach", func(e *env) error { _, err := e.store.Put(leasedPut("c", 1)); return err }},
		{"move", func(e *env) error { _, err := e.store.Put(leasedPut("a", 2)); return err }},
		{"detach by put", func(e *env) error { _, err := e.store.Put(leasedPut("a", 0)); return err }},
		{"detach by delete", func(e *env) error {
			_, err := e.store.DeleteRange(kv.DeleteRequest{Key: []byte("a"), End: []byte("c")})
			return err
		}},
		{"grant and put in one write", func(e *env) error {
			_, err := e.store.Write(func(tx *mvcc.WriteTxn) error {
				if _, err := e.lessor.Grant(tx, 3, 60); err != nil {
					return err
				}
				_, err := tx.Put(leasedPut("c", 3))
				return err
			})
			return err
		}},
	}
	for _, failAfter := range []bool{false, true} {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%s/data written=%v", tc.name, failAfter), func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "db")
				var faults mvcctest.Committer
				e := openEnvWith(t, path, lease.Config{}, &faults)
				mustGrant(t, e, 1, 60)
				mustGrant(t, e, 2, 60)
				mustPut(t, e, leasedPut("a", 1))
				mustPut(t, e, leasedPut("b", 1))
				before := leaseState(t, e.lessor)

				mode := mvcctest.Before
				if failAfter {
					mode = mvcctest.After
				}
				faults.Set(mode)
				if err := tc.write(e); !errors.Is(err, kv.ErrBackendFailed) {
					t.Fatalf("%s with a failing commit = %v, want ErrBackendFailed", tc.name, err)
				}
				if got := leaseState(t, e.lessor); got != before {
					t.Fatalf("leases after the failed %s = %s, want them as before: %s", tc.name, got, before)
				}
				for _, id := range []int64{1, 2} {
					if !e.lessor.Lookup(id) {
						t.Errorf("Lookup(%d) after the failed %s = false, want true", id, tc.name)
					}
				}
				if e.lessor.Lookup(3) {
					t.Errorf("Lookup(3) after the failed %s = true, want false", tc.name)
				}
				e.close()

				// A restart reads the file: with nothing written it is as
				// before; with the data written, it is as if the write had
				// succeeded, and the lessor follows the file either way.
				e = openEnv(t, path, lease.Config{})
				got := leaseState(t, e.lessor)
				if !failAfter && got != before {
					t.Fatalf("leases after a restart = %s, want %s", got, before)
				}
				checkLeasesMatchKeys(t, e)
			})
		}
	}
}

// checkLeasesMatchKeys checks the lessor against the store: each live key
// with a lease is attached to that lease, and nothing else is attached.
func checkLeasesMatchKeys(tb testing.TB, e *env) {
	tb.Helper()
	res, err := e.store.Range([]byte{0}, []byte{0}, kv.RangeOptions{})
	if err != nil {
		tb.Fatalf("Range(all) = %v", err)
	}
	want := make(map[int64][]string)
	for _, kval := range res.KVs {
		if kval.Lease != 0 {
			want[kval.Lease] = append(want[kval.Lease], string(kval.Key))
		}
	}
	for _, id := range e.lessor.Leases() {
		if got := keysOf(tb, e.lessor, id); !slices.Equal(got, want[id]) {
			tb.Errorf("Keys(%d) = %q, want the keys the store has with it: %q", id, got, want[id])
		}
		delete(want, id)
	}
	if len(want) != 0 {
		tb.Errorf("keys with leases the lessor does not have: %v", want)
	}
}
