package tests

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// The RBAC matrix's locks and elections live under app/ (app%2Flk,
// app%2Fel in paths): alice and wendy may write there, alice and bob read.

// rbacFresh clears name/ as root, so that a cell starts with an empty
// queue whatever the one before left.
func rbacFresh(tb testing.TB, f *rbacFixture, name string) {
	tb.Helper()
	e2e.AuthDo(tb, f.s, f.root, http.StatusOK, "DELETE", "/v1/kv?key="+name+"/&prefix=true", "")
}

// rbacHeld prepares a cell with root holding name through POST path (a
// lock or a campaign: %s is the name) with a new lease, and gives what
// pick takes from the answer.
func rbacHeld(name, path string, pick func(testing.TB, *e2e.Reply) string) func(testing.TB, *rbacFixture) string {
	return func(tb testing.TB, f *rbacFixture) string {
		tb.Helper()
		rbacFresh(tb, f, name)
		body := fmt.Sprintf(`{"lease":%d}`, f.grantLease(tb))
		return pick(tb, e2e.AuthDo(tb, f.s, f.root, http.StatusOK, "POST", fmt.Sprintf(path, e2e.PathSegment(name)), body))
	}
}

// rbacLocked prepares a cell with name locked by root, and gives the
// owner key.
func rbacLocked(name string) func(testing.TB, *rbacFixture) string {
	return rbacHeld(name, "/v1/locks/%s?timeout=0s", func(tb testing.TB, r *e2e.Reply) string {
		var l client.LockResponse
		r.Decode(tb, &l)
		return e2e.Deref(l.Key)
	})
}

// rbacCandidate prepares a cell with root leading the election called
// name, and gives the leader as JSON.
func rbacCandidate(name string) func(testing.TB, *rbacFixture) string {
	return rbacHeld(name, "/v1/elections/%s/campaign?timeout=0s", func(tb testing.TB, r *e2e.Reply) string {
		var c client.CampaignResponse
		r.Decode(tb, &c)
		return leaderJSON(c.Leader)
	})
}

// rbacKeyKept checks that a refused release left the lock's key.
func rbacKeyKept(tb testing.TB, f *rbacFixture, key string) {
	tb.Helper()
	e2e.AuthDo(tb, f.s, f.root, http.StatusOK, "GET", e2e.KeyPath(key), "")
}

// rbacObserve opens an observe stream of the election called name as c:
// an allowed one is closed once its head is read, a refused one answers
// at once.
func rbacObserve(name string) func(testing.TB, *rbacFixture, e2e.AuthCaller, string) *e2e.Reply {
	return func(tb testing.TB, f *rbacFixture, c e2e.AuthCaller, _ string) *e2e.Reply {
		tb.Helper()
		path := "/v1/elections/" + e2e.PathSegment(name) + "/observe"
		ctx, cancel := context.WithTimeout(context.Background(), e2e.WatchTimeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, "GET", f.s.URL+path, nil)
		if err != nil {
			tb.Fatal(err)
		}
		for h := c.Header(); len(h) > 1; h = h[2:] {
			req.Header.Set(h[0], h[1])
		}
		resp, err := f.s.Streams.Do(req)
		if err != nil {
			tb.Fatalf("GET %s as %s: %v", path, c.Name, err)
		}
		defer resp.Body.Close()
		r := &e2e.Reply{Req: "GET " + path, Status: resp.StatusCode, Header: resp.Header}
		if resp.StatusCode == http.StatusOK {
			e2e.CheckStreamHead(tb, r.Req, resp)
			return r
		}
		r.Body, _ = io.ReadAll(resp.Body)
		e2e.CheckReply(tb, r)
		return r
	}
}

// TestAuthObserveRevoked: an observe stream ends with canceled when its
// caller loses read on the election, as a watch does.
func TestAuthObserveRevoked(t *testing.T) {
	t.Parallel()
	f := startRBAC(t)
	carol := f.callers[3]
	if carol.Name != "carol" {
		t.Fatalf("caller 3 is %s, want carol", carol.Name)
	}
	o := openObserver(t, f.s, "mm", 0, carol.Header()...)
	if got := o.next(); got[:5] != "none@" {
		t.Fatalf("carol observes %q, want none", got)
	}
	e2e.AuthDo(t, f.s, f.root, http.StatusOK, "DELETE", "/v1/auth/roles/from-m/permissions?key=m&range_end=%00", "")
	if got := o.next(); got != "canceled: permission denied" {
		t.Fatalf("after carol lost read on mm/: %q, want canceled: permission denied", got)
	}
}
