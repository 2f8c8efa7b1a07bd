package e2e

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/httpkv/httpkv/openapi/client"
)

// GrantLease grants a lease of ttl seconds and returns its ID.
func (s *Server) GrantLease(tb testing.TB, ttl int64) int64 {
	tb.Helper()
	var l client.LeaseResponse
	s.Do(tb, "POST", "/v1/leases", fmt.Appendf(nil, `{"ttl":%d}`, ttl)).Ok(tb, http.StatusCreated, &l)
	return l.Id
}

// waitTimeout bounds a request that waits for a lock or a leadership: a
// bound on the test, not an assertion on timing.
const waitTimeout = 2 * time.Minute

// sendWaiting sends a request that may wait (a lock, a campaign), bounded
// by ctx and waitTimeout rather than the usual request timeout.
func (s *Server) sendWaiting(ctx context.Context, method, path string, body []byte) (*Reply, error) {
	ctx, cancel := context.WithTimeout(ctx, waitTimeout)
	defer cancel()
	return s.SendWith(s.Streams, ctx, method, path, body)
}

// LockRequest posts a lock of name for lease, waiting up to timeout.
func (s *Server) LockRequest(tb testing.TB, ctx context.Context, name string, lease int64, timeout string) (*Reply, error) {
	r, err := s.sendWaiting(ctx, "POST", "/v1/locks/"+name+"?timeout="+timeout, fmt.Appendf(nil, `{"lease":%d}`, lease))
	if err == nil {
		CheckReply(tb, r)
	}
	return r, err
}

// Lock acquires name for lease and returns the answer.
func (s *Server) Lock(tb testing.TB, name string, lease int64) client.LockResponse {
	tb.Helper()
	r, err := s.LockRequest(tb, context.Background(), name, lease, "1m")
	if err != nil {
		tb.Fatal(err)
	}
	var l client.LockResponse
	r.Ok(tb, http.StatusOK, &l)
	if want := fmt.Sprintf("%s/%x", name, lease); Deref(l.Key) != want {
		tb.Fatalf("lock %s for lease %x: key %q, want %q", name, lease, Deref(l.Key), want)
	}
	return l
}

// Unlock releases a lock and returns the answer's revision.
func (s *Server) Unlock(tb testing.TB, name, key string) int64 {
	tb.Helper()
	return s.Do(tb, "DELETE", "/v1/locks/"+name+"?key="+key, nil).Want(tb, http.StatusOK).Revision(tb)
}

// Queue lists the keys under name/, oldest first.
func (s *Server) Queue(tb testing.TB, name string) []string {
	tb.Helper()
	var l client.ListResponse
	s.Do(tb, "GET", "/v1/kv?key="+name+"/&prefix=true&sort_target=create", nil).Ok(tb, http.StatusOK, &l)
	return ListKeys(l)
}

// WaitQueue waits until name/ holds n keys.
func (s *Server) WaitQueue(tb testing.TB, name string, n int) {
	tb.Helper()
	Eventually(tb, time.Minute, func() (bool, string) {
		q := s.Queue(tb, name)
		return len(q) == n, fmt.Sprintf("%s/ holds %q, want %d keys", name, q, n)
	})
}
