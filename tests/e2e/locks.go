package e2e

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/httpkv/httpkv/openapi/client"
)

// Campaign posts a campaign and returns the answer, or the transport's
// error; it may run off the test's goroutine.
func (s *Server) Campaign(ctx context.Context, name string, lease int64, value string) (*Reply, error) {
	return s.sendWaiting(ctx, "POST", "/v1/elections/"+name+"/campaign?timeout=2m", fmt.Appendf(nil, `{"lease":%d,"value":%q}`, lease, value))
}

// CampaignAsync campaigns on a goroutine of its own; the channel yields
// the answer once the candidate leads. It returns before the candidate is
// queued: a test that needs its place in the queue waits for its key
// (waitQueue) before anything else campaigns.
func (s *Server) CampaignAsync(name string, lease int64, value string) <-chan *Reply {
	ch := make(chan *Reply, 1)
	go func() {
		r, err := s.Campaign(context.Background(), name, lease, value)
		if err != nil {
			r = &Reply{Req: "campaign", Status: 0, Body: []byte(err.Error())}
		}
		ch <- r
	}()
	return ch
}

// Leadership computes from the history of name/ what an observer that
// knows the state at revision from should see: at each revision where
// the leader (the key with the lowest create revision), or its value,
// changed, "key=value@rev" or "none@rev".
func (s *Server) Leadership(tb testing.TB, name string, from int64) []string {
	tb.Helper()
	hist := s.History(tb, "key="+name+"/&prefix=true&limit=10000")
	keys := map[string]client.KeyValue{}
	var out []string
	state := func() string {
		var lead *client.KeyValue
		for _, kv := range keys {
			if lead == nil || kv.CreateRevision < lead.CreateRevision {
				lead = &kv
			}
		}
		if lead == nil {
			return "none"
		}
		return fmt.Sprintf("%s=%s@%d", KeyOf(lead), ValueOf(lead), lead.ModRevision)
	}
	prev := ""
	for i, ev := range hist.Events {
		if ev.Type == "put" {
			keys[KeyOf(&ev.Kv)] = ev.Kv
		} else {
			delete(keys, KeyOf(&ev.Kv))
		}
		rev := ev.Kv.ModRevision
		if i+1 < len(hist.Events) && hist.Events[i+1].Kv.ModRevision == rev {
			continue // the rest of the revision first
		}
		cur := state()
		if cur != prev && rev > from {
			// A put's observation is at its revision, shown with it;
			// a leader inherited at a delete, at the delete's revision.
			who, _, _ := strings.Cut(cur, "@")
			out = append(out, fmt.Sprintf("%s@%d", who, rev))
		}
		prev = cur
	}
	return out
}

// KeepAlive renews a lease twice a second, ten times per TTL of the
// tests' crashing leases, until the returned stop is called or the test
// ends; stop returns once the renewals have stopped, and from then on the
// lease expires within its TTL: the holder has crashed.
func (s *Server) KeepAlive(tb testing.TB, lease int64) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				_, _ = s.Send(context.Background(), "POST", fmt.Sprintf("/v1/leases/%d/keepalive", lease), nil)
			}
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() { close(quit) })
		<-done
	}
	tb.Cleanup(stop)
	return stop
}

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

// LeaseList returns the IDs of every lease.
func (s *Server) LeaseList(tb testing.TB) []int64 {
	tb.Helper()
	var res client.LeaseList
	s.Do(tb, "GET", "/v1/leases", nil).Ok(tb, http.StatusOK, &res)
	var ids []int64
	for _, l := range res.Leases {
		ids = append(ids, l.Id)
	}
	slices.Sort(ids)
	return ids
}

// waitFor sends a lock (path /v1/locks/NAME) or a campaign (path
// /v1/elections/NAME/campaign) for lease on a goroutine of its own, as
// caller; the channel yields the answer once held or leading. The request
// ends with the test. It returns before the key is queued: a test that
// needs its place in the queue waits for it (waitQueue).
func (s *Server) waitFor(t *testing.T, caller AuthCaller, path, body string) <-chan *Reply {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ch := make(chan *Reply, 1)
	go func() {
		r, err := s.SendWith(s.Streams, ctx, "POST", path, []byte(body), caller.Header("Content-Type", "application/json")...)
		if err != nil {
			r = &Reply{Req: "POST " + path, Body: []byte(err.Error())}
		}
		ch <- r
	}()
	return ch
}

// LockAsync asks for the lock name for lease; see waitFor.
func (s *Server) LockAsync(t *testing.T, caller AuthCaller, name string, lease int64) <-chan *Reply {
	return s.waitFor(t, caller, "/v1/locks/"+PathSegment(name)+"?timeout=2m", fmt.Sprintf(`{"lease":%d}`, lease))
}

// CampaignFor campaigns in the election name for lease with value; see waitFor.
func (s *Server) CampaignFor(t *testing.T, caller AuthCaller, name string, lease int64, value string) <-chan *Reply {
	return s.waitFor(t, caller, "/v1/elections/"+PathSegment(name)+"/campaign?timeout=2m", fmt.Sprintf(`{"lease":%d,"value":%q}`, lease, value))
}
