package crash

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/httpkv/httpkv/lease"
	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

const (
	massLeases   = 250 // leases expiring together in each round
	massLeaseTTL = 6   // seconds
	// crashRevokeBatch is the most leases one commit of the crash-point
	// build revokes (16): its expiry loop reports at most CrashRevokeRate
	// × CheckInterval expired leases at a time, and the next once they
	// are revoked. The server's revokes 64 at a time at most.
	crashRevokeBatch = int(e2e.CrashRevokeRate * lease.DefaultCheckInterval / time.Second)
)

// massLease is a lease of a mass expiry and the keys put with it.
type massLease struct {
	id   int64
	keys []string
	put  int64 // the revision of the txn that put them
}

// TestCrashInsideLeaseExpiry grants 250 leases with three keys each
// and restarts the server, which gives every lease its full TTL again:
// they expire together, as fast as the server revokes leases (three
// quarters of its revoke rate after a restart; the crash-point build
// revokes at CrashRevokeRate, at most crashRevokeBatch in a commit). It
// kills the server (SIGKILL, from its crash point) at a commit of the
// revokes, the only commits then: before one or once it is durable. After a restart every lease is either gone with
// all its keys or there with all of them; the restarted server expires
// the rest; and the history shows each lease's keys put at one revision
// and deleted at one revision holding exactly them, with no gap in the
// revisions.
func TestCrashInsideLeaseExpiry(t *testing.T) {
	t.Parallel()
	e2e.EmbeddedOnly(t, "it crashes the embedded store inside its lease expiry; etcd expires a gateway's leases")
	rng := e2e.TestRand(t, "HTTPKV_CRASH_LEASE_SEED")
	// The binary with crash points, built now: built at the first
	// restart, on a loaded machine, it took longer than the leases' TTL,
	// and they expired before the restart that should revoke them.
	e2e.CrashBinary(t)
	s := e2e.StartServer(t, "--unsafe-no-fsync=false")
	arm := filepath.Join(t.TempDir(), "arm")
	// Revokes run crashRevokeBatch (16) at a time at most: 250 make 16
	// commits or more, and leases that expire before the restart (on a
	// slow machine, granting takes longer than their TTL) leave fewer.
	// The points stay among the first 12.
	for round, point := range randomCrashPoints(rng, 3, 12) {
		from := s.Status(t).Revision + 1
		prefix := fmt.Sprintf("lease/%d/", round)
		start := time.Now()
		leases := grantMassLeases(t, s, prefix)
		t.Logf("round %d: %d leases granted with their keys in %v", round, len(leases), time.Since(start))
		// On a slow machine granting takes longer than the TTL, and the
		// first leases expire before the restart: the restart then revokes
		// only those left, in at least one commit per crashRevokeBatch of
		// them. Keep the crash point among those commits, or it is never
		// reached.
		alive, listed := 0, leaseIDs(t, s)
		for _, ls := range leases {
			if listed[ls.id] {
				alive++
			}
		}
		if alive == 0 {
			t.Fatalf("round %d: all %d leases expired while they were granted (%v, TTL %d s)", round, len(leases), time.Since(start), massLeaseTTL)
		}
		if most := (alive + crashRevokeBatch - 1) / crashRevokeBatch; point.Commit > most {
			t.Logf("round %d: %d leases left at the restart, %d commits at least: crash point %v moved to commit %d", round, alive, most, point, most)
			point.Commit = most
		}

		touch(t, arm)
		s.RestartAt(point, arm)
		s.WaitCrashed(massLeaseTTL*time.Second + 2*time.Minute)
		os.Remove(arm)
		s.RestartAt(e2e.CrashPoint{}, "")

		// Right after the restart: every lease whole, or gone whole. The
		// restarted server gives the leases their TTL again, but on a
		// loaded machine the TTL may pass before the reads: the keys are
		// read before and after the list, so that a lease revoked between
		// two reads is seen whole on one side and gone on the other.
		before := leasedKeys(t, s, prefix)
		listed = leaseIDs(t, s)
		after := leasedKeys(t, s, prefix)
		revoked := 0
		for _, ls := range leases {
			n, m := keysOfLease(t, before, ls), keysOfLease(t, after, ls)
			whole := func(n int) bool { return n == 0 || n == len(ls.keys) }
			switch {
			case !whole(n) || !whole(m) || n == 0 && m != 0 ||
				listed[ls.id] && n == 0 || !listed[ls.id] && m != 0:
				t.Errorf("lease %d after the kill: %d of its %d keys, then listed %v, then %d keys; want all or none of them, and listed only while they are all there",
					ls.id, n, len(ls.keys), listed[ls.id], m)
			case n == 0:
				revoked++
			}
		}
		t.Logf("round %d: killed at %v with %d of %d leases revoked", round, point, revoked, len(leases))
		if t.Failed() {
			return
		}

		// The restarted server expires the others.
		e2e.Eventually(t, massLeaseTTL*time.Second+time.Minute, func() (bool, string) {
			var l client.ListResponse
			s.Do(t, "GET", "/v1/kv?key="+prefix+"&prefix=true&count_only=true", nil).Ok(t, http.StatusOK, &l)
			return l.Count == 0, fmt.Sprintf("%d keys of the expired leases are left", l.Count)
		})
		if n := len(leaseIDs(t, s)); n != 0 {
			t.Fatalf("GET /v1/leases lists %d leases once their keys are gone, want none", n)
		}
		checkLeaseHistory(t, s, from, prefix, leases)
	}
}

// grantMassLeases grants massLeases leases of massLeaseTTL seconds from
// 16 clients and puts three keys under prefix with each, in one txn.
func grantMassLeases(tb testing.TB, s *e2e.Server, prefix string) []massLease {
	tb.Helper()
	out := make([]massLease, massLeases)
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			for i := w; i < massLeases; i += 16 {
				var g client.LeaseResponse
				s.Do(tb, "POST", "/v1/leases", []byte(fmt.Sprintf(`{"ttl":%d}`, massLeaseTTL))).Ok(tb, http.StatusCreated, &g)
				ls := massLease{id: g.Id}
				var ops []string
				for _, k := range []string{"a", "b", "c"} {
					key := fmt.Sprintf("%s%d/%s", prefix, g.Id, k)
					ls.keys = append(ls.keys, key)
					ops = append(ops, fmt.Sprintf(`{"put":{"key":%s,"value":"v","lease":%d}}`, e2e.JSONString(key), g.Id))
				}
				var res client.TxnResponse
				s.Txn(tb, `{"success":[`+strings.Join(ops, ",")+`]}`).Ok(tb, http.StatusOK, &res)
				ls.put = res.Header.Revision
				out[i] = ls
			}
		})
	}
	wg.Wait()
	return out
}

// leasedKeys returns the keys under prefix with their leases.
func leasedKeys(tb testing.TB, s *e2e.Server, prefix string) map[string]int64 {
	tb.Helper()
	var l client.ListResponse
	s.Do(tb, "GET", "/v1/kv?key="+url.QueryEscape(prefix)+"&prefix=true&keys_only=true&limit=10000", nil).Ok(tb, http.StatusOK, &l)
	out := make(map[string]int64, len(l.Kvs))
	for _, kv := range l.Kvs {
		out[e2e.KeyOf(&kv)] = kv.Lease
	}
	return out
}

// keysOfLease counts the keys of ls in present, and fails the test for
// one held by another lease.
func keysOfLease(tb testing.TB, present map[string]int64, ls massLease) int {
	tb.Helper()
	n := 0
	for _, k := range ls.keys {
		if id, ok := present[k]; ok {
			n++
			if id != ls.id {
				tb.Errorf("key %s has lease %d, want %d", k, id, ls.id)
			}
		}
	}
	return n
}

// leaseIDs returns the leases GET /v1/leases lists, every page.
func leaseIDs(tb testing.TB, s *e2e.Server) map[int64]bool {
	tb.Helper()
	out := make(map[int64]bool)
	path := "/v1/leases?limit=10000"
	for {
		var res client.LeaseList
		s.Do(tb, "GET", path, nil).Ok(tb, http.StatusOK, &res)
		for _, l := range res.Leases {
			out[l.Id] = true
		}
		if !res.More {
			return out
		}
		path = "/v1/leases?limit=10000&page_token=" + url.QueryEscape(*res.NextPageToken)
	}
}

// checkLeaseHistory checks the history from revision from on: no
// revision without events, and under prefix each lease's keys put
// together at its txn's revision and deleted together, at one revision
// holding exactly their deletes.
func checkLeaseHistory(tb testing.TB, s *e2e.Server, from int64, prefix string, leases []massLease) {
	tb.Helper()
	cur := s.Status(tb).Revision
	revs := historyByRevision(tb, s, from, cur)
	for rev := from; rev <= cur; rev++ {
		if len(revs[rev]) == 0 {
			tb.Fatalf("GET /v1/history: revision %d holds no event (from %d to %d): the revisions have a gap", rev, from, cur)
		}
	}
	deletedAt := make(map[string]int64)
	for rev, evs := range revs {
		for _, ev := range evs {
			if k, ok := strings.CutPrefix(ev, "del "); ok && strings.HasPrefix(k, prefix) {
				if deletedAt[k] != 0 {
					tb.Errorf("key %s deleted at revisions %d and %d", k, deletedAt[k], rev)
				}
				deletedAt[k] = rev
			}
		}
	}
	for _, ls := range leases {
		var puts, dels []string
		for _, k := range ls.keys {
			puts = append(puts, "put "+k+"=v")
			dels = append(dels, "del "+k)
		}
		if got := revs[ls.put]; !slices.Equal(got, puts) {
			tb.Errorf("lease %d: revision %d of its txn holds %q, want %q", ls.id, ls.put, got, puts)
		}
		rev := deletedAt[ls.keys[0]]
		if got := revs[rev]; rev == 0 || !slices.Equal(got, dels) {
			tb.Errorf("lease %d: its keys are deleted at revision %d, which holds %q; want exactly %q", ls.id, rev, got, dels)
		}
	}
}
