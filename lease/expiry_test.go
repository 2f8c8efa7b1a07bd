package lease_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/lease"
	"github.com/httpkv/httpkv/mvcc"
)

// The tests below run in a synctest bubble: time.Sleep moves the bubble's
// fake clock, which both time.Now and the expiry loop's ticker read, as
// soon as every goroutine in it is blocked. They take no real time.

// advance moves the fake clock by d and waits for the expiry loop and
// the revoker to finish what that set off.
func advance(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}

func TestExpiryDeletesExactlyAttachedKeysInOneRevision(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, lease.Config{})
		e.startRevoker(t, nil)
		mustGrant(t, e, 1, 5)
		mustGrant(t, e, 2, 60)
		for _, k := range []string{"a", "b", "c"} {
			mustPut(t, e, leasedPut(k, 1))
		}
		mustPut(t, e, leasedPut("d", 2))
		mustPut(t, e, leasedPut("e", 0))
		rev := e.store.Rev()

		advance(4 * time.Second)
		if got := liveKeys(t, e.store); len(got) != 5 {
			t.Fatalf("keys 4s into a 5s lease = %q, want all 5", got)
		}
		advance(time.Second)

		if got := e.store.Rev(); got != rev+1 {
			t.Fatalf("Rev() after expiry = %d, want %d: one revision", got, rev+1)
		}
		var deleted []string
		for _, ev := range history(t, e.store, rev+1) {
			if ev.Type != kv.EventDelete {
				t.Fatalf("History(%d) has a %v of %q, want deletes only", rev+1, ev.Type, ev.KV.Key)
			}
			deleted = append(deleted, string(ev.KV.Key))
		}
		if !slices.Equal(deleted, []string{"a", "b", "c"}) {
			t.Fatalf("expiry deleted %q, want [a b c]", deleted)
		}
		if got := e.lessor.Leases(); !slices.Equal(got, []int64{2}) {
			t.Fatalf("Leases() after expiry = %v, want [2]", got)
		}
	})
}

func TestKeepAlivePreventsExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, lease.Config{})
		e.startRevoker(t, nil)
		mustGrant(t, e, 1, 5)
		mustPut(t, e, leasedPut("a", 1))

		for i := range 10 { // 40s, eight TTLs
			advance(4 * time.Second)
			if ttl, err := e.lessor.KeepAlive(1); err != nil || ttl != 5 {
				t.Fatalf("KeepAlive(1) after %ds = %d, %v, want 5", 4*(i+1), ttl, err)
			}
		}
		if got := liveKeys(t, e.store); !slices.Equal(got, []string{"a"}) {
			t.Fatalf("keys of a kept-alive lease = %q, want [a]", got)
		}

		advance(5 * time.Second)
		if got := liveKeys(t, e.store); len(got) != 0 {
			t.Fatalf("keys once keep-alives stopped = %q, want none", got)
		}
		if _, err := e.lessor.KeepAlive(1); !errors.Is(err, kv.ErrLeaseNotFound) {
			t.Fatalf("KeepAlive(1) after expiry = %v, want ErrNotFound", err)
		}
	})
}

func TestUnrevokedLeaseIsReportedAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, lease.Config{}) // no revoker: nothing revokes
		mustGrant(t, e, 1, 5)
		mustPut(t, e, leasedPut("a", 1))

		advance(5 * time.Second)
		if ids := receive(t, e.lessor); !slices.Equal(ids, []int64{1}) {
			t.Fatalf("Expired() at expiry = %v, want [1]", ids)
		}
		if _, err := e.lessor.KeepAlive(1); !errors.Is(err, kv.ErrLeaseNotFound) {
			t.Fatalf("KeepAlive(1) of a reported lease = %v, want ErrNotFound", err)
		}
		if !e.lessor.Lookup(1) {
			t.Fatalf("Lookup(1) of a reported, unrevoked lease = false, want true")
		}

		advance(lease.DefaultRetryInterval - time.Second)
		if ids := receive(t, e.lessor); ids != nil {
			t.Fatalf("Expired() before the retry interval = %v, want nothing", ids)
		}
		advance(time.Second)
		if ids := receive(t, e.lessor); !slices.Equal(ids, []int64{1}) {
			t.Fatalf("Expired() after the retry interval = %v, want [1]", ids)
		}
	})
}

func TestExpiryReportOfRegrantedIDIsIgnored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, lease.Config{}) // the test revokes by hand
		mustGrant(t, e, 1, 5)
		mustPut(t, e, leasedPut("a", 1))
		advance(5 * time.Second)
		if ids := receive(t, e.lessor); !slices.Equal(ids, []int64{1}) {
			t.Fatalf("Expired() at expiry = %v, want [1]", ids)
		}

		// Before the report is acted on, a client revokes the lease
		// and grants its ID again.
		if _, err := e.manager.Revoke(1, nil); err != nil {
			t.Fatalf("Revoke(1) = %v", err)
		}
		mustGrant(t, e, 1, 60)
		mustPut(t, e, leasedPut("b", 1))
		rev := e.store.Rev()

		if _, err := e.manager.RevokeExpired(1); err != nil {
			t.Fatalf("RevokeExpired(1) of the new lease = %v", err)
		}
		if got := e.store.Rev(); got != rev || !e.lessor.Lookup(1) {
			t.Fatalf("RevokeExpired(1) of the new lease: Rev() = %d (want %d), Lookup(1) = %v (want true)", got, rev, e.lessor.Lookup(1))
		}
		if got := liveKeys(t, e.store); !slices.Equal(got, []string{"b"}) {
			t.Fatalf("keys = %q, want [b]", got)
		}
	})
}

// receive returns the batch waiting on Expired, or nil.
func receive(tb testing.TB, l *lease.Lessor) []int64 {
	tb.Helper()
	select {
	case ids := <-l.Expired():
		return ids
	default:
		return nil
	}
}

func TestRestartExpiresAfterFullTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, lease.Config{})
		mustGrant(t, e, 1, 10)
		mustPut(t, e, leasedPut("a", 1))
		advance(8 * time.Second)
		e.close()

		advance(time.Minute) // down
		e = openEnv(t, e.path, lease.Config{})
		e.startRevoker(t, nil)
		advance(9 * time.Second)
		if got := liveKeys(t, e.store); !slices.Equal(got, []string{"a"}) {
			t.Fatalf("keys 9s after restart = %q, want [a]: the lease gets its full 10s", got)
		}
		advance(time.Second)
		if got := liveKeys(t, e.store); len(got) != 0 {
			t.Fatalf("keys 10s after restart = %q, want none", got)
		}
	})
}

// TestMassExpiry expires ten thousand leases at once while a client
// keeps writing. The leases are reported at the revoke rate, so the
// revokes reach the store spread over ten seconds and the client's
// writes commit between them. BenchmarkMassExpiry measures the client's
// latency in real time.
func TestMassExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 10_000
		e := newEnv(t, lease.Config{})
		var (
			mu      sync.Mutex
			batches []int
		)
		e.startRevoker(t, func(ids []int64) {
			mu.Lock()
			batches = append(batches, len(ids))
			mu.Unlock()
		})
		grantLeasedKeys(t, e, n, 5)

		// The client writes every 100ms until every lease is revoked.
		stop := make(chan struct{})
		var revs []int64
		wrote := make(chan struct{})
		go func() {
			defer close(wrote)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				case <-time.After(100 * time.Millisecond):
				}
				res, err := e.store.Put(kv.PutRequest{Key: []byte("client"), Value: fmt.Appendf(nil, "%d", i)})
				if err != nil {
					t.Errorf("client Put #%d = %v", i, err)
					return
				}
				revs = append(revs, res.Revision)
			}
		}()

		start := e.store.Rev()
		advance(5 * time.Second)
		for len(e.lessor.Leases()) > 0 {
			advance(lease.DefaultCheckInterval)
		}
		close(stop)
		<-wrote

		perTick := lease.DefaultRevokeRate * int(lease.DefaultCheckInterval) / int(time.Second)
		total := 0
		for _, b := range batches {
			if b > perTick {
				t.Errorf("Expired() batch of %d leases, want at most %d", b, perTick)
			}
			total += b
		}
		if total != n || len(batches) != n/perTick {
			t.Errorf("Expired() reported %d leases in %d batches, want %d in %d", total, len(batches), n, n/perTick)
		}
		if got := liveKeys(t, e.store); !slices.Equal(got, []string{"client"}) {
			t.Fatalf("%d keys left after mass expiry, want only the client's", len(got))
		}
		// Client writes landed among the revokes, not after them all.
		end := e.store.Rev()
		among := 0
		for _, r := range revs {
			if r > start && r < end {
				among++
			}
		}
		if among < 50 {
			t.Errorf("%d of %d client writes committed during the revokes (revisions %d to %d), want at least 50", among, len(revs), start, end)
		}
	})
}

// grantLeasedKeys grants n leases with the TTL and puts one key with each,
// all in one store write.
func grantLeasedKeys(tb testing.TB, e *env, n int, ttl int64) {
	tb.Helper()
	_, err := e.store.Write(func(tx *mvcc.WriteTxn) error {
		for i := range n {
			g, err := e.lessor.Grant(tx, 0, ttl)
			if err != nil {
				return err
			}
			if _, err := tx.Put(leasedPut(fmt.Sprintf("k%06d", i), g.ID)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("grant %d leased keys = %v", n, err)
	}
}
