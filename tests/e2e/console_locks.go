package e2e

import (
	"context"
	"fmt"
	"testing"
)

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
