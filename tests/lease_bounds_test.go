package tests

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// TestLeasesBounded: leases are a cost any authenticated client can make
// the server carry. Clients granting from many connections at once stop
// at --max-leases, every grant past it answering 429 (exactly at the
// bound on the embedded store; a gateway alone passes it by at most the
// grants in flight when it counts); and lists of them, asked for by many
// clients at once, answer at most 10,000 IDs each, so that what they
// build does not grow with the leases alive.
func TestLeasesBounded(t *testing.T) {
	t.Parallel()
	const (
		max     = 10000
		workers = 16
		lists   = 40
		mib     = 1 << 20
	)
	s := e2e.StartServer(t, fmt.Sprintf("--max-leases=%d", max))
	heap := func() float64 { return s.Metric(t, "go_memstats_heap_inuse_bytes") }
	before := heap()
	var granted, refused atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for refused.Load() < workers {
				r := s.Do(t, "POST", "/v1/leases", []byte(`{"ttl":3600}`))
				switch r.Status {
				case http.StatusCreated:
					granted.Add(1)
				case http.StatusTooManyRequests:
					r.WantError(t, http.StatusTooManyRequests, "too_many_requests")
					refused.Add(1)
				default:
					t.Errorf("%s = %d %s", r.Req, r.Status, r.Body)
					return
				}
			}
		})
	}
	wg.Wait()
	withLeases := heap()
	n := granted.Load()
	t.Logf("%d grants from %d connections: %d granted, %d refused; the heap grew %.1f MiB (%.0f bytes a lease)",
		n+refused.Load(), workers, n, refused.Load(), (withLeases-before)/mib, (withLeases-before)/float64(n))
	if most := int64(max); e2e.OnEtcd(t) {
		if most += workers; n < max || n > most {
			t.Errorf("%d leases granted under --max-leases=%d, want %d to %d", n, max, max, most)
		}
	} else if n != max {
		t.Errorf("%d leases granted under --max-leases=%d, want exactly %d", n, max, max)
	}

	var bodies atomic.Int64
	var largest atomic.Int64
	for range lists {
		wg.Go(func() {
			var page client.LeaseList
			r := s.Do(t, "GET", "/v1/leases?limit=10000", nil).Ok(t, http.StatusOK, &page)
			if want := min(n, 10000); int64(len(page.Leases)) != want || page.More != (n > want) {
				t.Errorf("%s: %d leases, more %v; want %d of %d", r.Req, len(page.Leases), page.More, want, n)
			}
			bodies.Add(int64(len(r.Body)))
			if b := int64(len(r.Body)); b > largest.Load() {
				largest.Store(b)
			}
		})
	}
	wg.Wait()
	grown := heap() - withLeases
	t.Logf("%d lists of the first 10,000 leases at once: answers of %.2f MiB at most, %.1f MiB in all; the heap grew %.1f MiB",
		lists, float64(largest.Load())/mib, float64(bodies.Load())/mib, grown/mib)
	if largest.Load() > 256<<10 {
		t.Errorf("a page of 10,000 leases took %d bytes", largest.Load())
	}
}
