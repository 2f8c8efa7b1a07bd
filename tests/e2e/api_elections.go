package e2e

import (
	"context"
	"fmt"
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
