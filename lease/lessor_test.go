package lease_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/lease"
)

func TestGrant(t *testing.T) {
	cases := []struct {
		name    string
		id, ttl int64
		want    lease.Lease // ID 0: any ID in [1, MaxID]
		wantErr error
	}{
		{name: "ttl kept", ttl: 60, want: lease.Lease{TTL: 60}},
		{name: "ttl below minimum raised", ttl: 1, want: lease.Lease{TTL: lease.MinTTL}},
		{name: "ttl at maximum", ttl: lease.MaxTTL, want: lease.Lease{TTL: lease.MaxTTL}},
		{name: "chosen id", id: 42, ttl: 60, want: lease.Lease{ID: 42, TTL: 60}},
		{name: "largest id", id: lease.MaxID, ttl: 60, want: lease.Lease{ID: lease.MaxID, TTL: 60}},
		{name: "id taken", id: 7, ttl: 60, wantErr: kv.ErrLeaseExists},
		{name: "zero ttl", ttl: 0, wantErr: lease.ErrInvalidTTL},
		{name: "negative ttl", ttl: -5, wantErr: lease.ErrInvalidTTL},
		{name: "ttl too large", ttl: lease.MaxTTL + 1, wantErr: lease.ErrInvalidTTL},
		{name: "negative id", id: -1, ttl: 60, wantErr: lease.ErrInvalidID},
		{name: "id too large", id: lease.MaxID + 1, ttl: 60, wantErr: lease.ErrInvalidID},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, lease.Config{})
			mustGrant(t, e, 7, 60)
			before := e.lessor.Leases()

			got, err := e.manager.Grant(tc.id, tc.ttl)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Grant(%d, %d) = %+v, %v, want %v", tc.id, tc.ttl, got, err, tc.wantErr)
				}
				if after := e.lessor.Leases(); !slices.Equal(after, before) {
					t.Fatalf("Leases() after failed Grant = %v, want %v", after, before)
				}
				return
			}
			if err != nil {
				t.Fatalf("Grant(%d, %d) = %v", tc.id, tc.ttl, err)
			}
			want := tc.want
			if want.ID == 0 {
				want.ID = got.ID
			}
			if got != want || got.ID < 1 || got.ID > lease.MaxID {
				t.Fatalf("Grant(%d, %d) = %+v, want %+v", tc.id, tc.ttl, got, want)
			}
			st, err := e.lessor.TimeToLive(got.ID, false)
			if err != nil || st.TTL != want.TTL || st.Remaining != want.TTL {
				t.Fatalf("TimeToLive(%d) = %+v, %v, want TTL and Remaining %d", got.ID, st, err, want.TTL)
			}
		})
	}
}

func TestGrantChoosesUniqueIDs(t *testing.T) {
	e := newEnv(t, lease.Config{})
	const n = 1000
	seen := make(map[int64]bool)
	for range n {
		g := mustGrant(t, e, 0, 60)
		if g.ID < 1 || g.ID > lease.MaxID || seen[g.ID] {
			t.Fatalf("Grant(0, 60) = ID %d: out of [1, MaxID] or seen before", g.ID)
		}
		seen[g.ID] = true
	}
	ids := e.lessor.Leases()
	if len(ids) != n || !slices.IsSorted(ids) {
		t.Fatalf("Leases() = %d IDs (sorted %v), want %d sorted", len(ids), slices.IsSorted(ids), n)
	}
}

func TestRevokeUnknownLease(t *testing.T) {
	e := newEnv(t, lease.Config{})
	mustGrant(t, e, 1, 60)
	mustPut(t, e, leasedPut("a", 1))
	rev := e.store.Rev()

	for _, id := range []int64{2, 0, -1} {
		if _, err := e.manager.Revoke(id, nil); !errors.Is(err, kv.ErrLeaseNotFound) {
			t.Fatalf("Revoke(%d) = %v, want kv.ErrLeaseNotFound", id, err)
		}
	}
	if got := e.store.Rev(); got != rev {
		t.Fatalf("Rev() after failed revokes = %d, want %d", got, rev)
	}
	if got := keysOf(t, e.lessor, 1); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("Keys(1) = %q, want [a]", got)
	}
	if _, err := e.manager.Revoke(1, nil); err != nil {
		t.Fatalf("Revoke(1) = %v", err)
	}
	if _, err := e.manager.Revoke(1, nil); !errors.Is(err, kv.ErrLeaseNotFound) {
		t.Fatalf("second Revoke(1) = %v, want kv.ErrLeaseNotFound", err)
	}
}

// TestTimeToLive drives the lessor with a fake Config.Now.
func TestTimeToLive(t *testing.T) {
	c := newClock()
	e := newEnv(t, lease.Config{Now: c.Now})
	mustGrant(t, e, 1, 10)
	mustPut(t, e, leasedPut("b", 1))
	mustPut(t, e, leasedPut("a", 1))

	steps := []struct {
		name          string
		advance       time.Duration
		keepAlive     bool
		wantRemaining int64
		wantErr       error // of KeepAlive
	}{
		{name: "just granted", wantRemaining: 10},
		{name: "rounded up", advance: 2500 * time.Millisecond, wantRemaining: 8},
		{name: "renewed to full ttl", keepAlive: true, wantRemaining: 10},
		{name: "last instant", advance: 10*time.Second - time.Nanosecond, wantRemaining: 1},
		{name: "expired", advance: time.Nanosecond, wantRemaining: 0},
		{name: "expired cannot be renewed", keepAlive: true, wantErr: kv.ErrLeaseNotFound, wantRemaining: 0},
	}
	for _, s := range steps {
		c.Advance(s.advance)
		if s.keepAlive {
			ttl, err := e.lessor.KeepAlive(1)
			if !errors.Is(err, s.wantErr) || (err == nil && ttl != 10) {
				t.Fatalf("%s: KeepAlive(1) = %d, %v, want 10, %v", s.name, ttl, err, s.wantErr)
			}
		}
		st, err := e.lessor.TimeToLive(1, false)
		if err != nil || st.Remaining != s.wantRemaining || st.TTL != 10 || st.Keys != nil {
			t.Fatalf("%s: TimeToLive(1, false) = %+v, %v, want Remaining %d, TTL 10, no keys", s.name, st, err, s.wantRemaining)
		}
	}

	// Expired but not revoked: it still exists, with its keys.
	st, err := e.lessor.TimeToLive(1, true)
	if err != nil || !slices.Equal(strs(st.Keys), []string{"a", "b"}) {
		t.Fatalf("TimeToLive(1, true) = %+v, %v, want keys [a b]", st, err)
	}
	if !e.lessor.Lookup(1) {
		t.Fatalf("Lookup(1) of an expired, unrevoked lease = false, want true")
	}
	if _, err := e.lessor.TimeToLive(2, true); !errors.Is(err, kv.ErrLeaseNotFound) {
		t.Fatalf("TimeToLive(2, true) = %v, want ErrNotFound", err)
	}
	if _, err := e.lessor.KeepAlive(2); !errors.Is(err, kv.ErrLeaseNotFound) {
		t.Fatalf("KeepAlive(2) = %v, want ErrNotFound", err)
	}
}

func TestCloseIsIdempotent(t *testing.T) {
	l := lease.New(lease.Config{})
	l.Close()
	l.Close()
	if _, ok := <-l.Expired(); ok {
		t.Fatalf("Expired() after Close yielded a batch, want closed")
	}
}
