package tests

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/httpkv/httpkv/internal/ssetest"
	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// observeTimeout bounds a whole observe stream of a test: a bound on the
// test, not an assertion on timing.
const observeTimeout = 2 * time.Minute

// leaderJSON is the leader as proclaim and resign take it.
func leaderJSON(l client.LeaderKey) string {
	b, _ := json.Marshal(l)
	return string(b)
}

// leading checks a campaign's answer and returns its leader.
func leading(tb testing.TB, r *e2e.Reply) client.LeaderKey {
	tb.Helper()
	e2e.CheckReply(tb, r)
	var c client.CampaignResponse
	r.Ok(tb, http.StatusOK, &c)
	return c.Leader
}

// observer is an open GET /v1/elections/{name}/observe, read on the
// test's goroutine. Every message is parsed by ssetest.Parser and checked
// against the contract as it is read.
type observer struct {
	tb     testing.TB
	req    string
	p      *ssetest.Parser
	lastID int64
	close  func()
}

// openObserver observes the election called name, resuming after the
// revision after unless it is 0. It is closed on cleanup.
func openObserver(tb testing.TB, s *e2e.Server, name string, after int64, header ...string) *observer {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), observeTimeout)
	req, err := http.NewRequestWithContext(ctx, "GET", s.URL+"/v1/elections/"+name+"/observe", nil)
	if err != nil {
		cancel()
		tb.Fatal(err)
	}
	if after > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(after, 10))
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	o := &observer{tb: tb, req: "GET /v1/elections/" + name + "/observe", lastID: after}
	resp, err := s.Streams.Do(req)
	if err != nil {
		cancel()
		tb.Fatalf("%s: %v", o.req, err)
	}
	var once sync.Once
	o.close = func() { once.Do(func() { cancel(); resp.Body.Close() }) }
	tb.Cleanup(o.close)
	e2e.CheckStreamHead(tb, o.req, resp)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream; charset=utf-8" {
		b, _ := io.ReadAll(resp.Body)
		tb.Fatalf("%s = %d %q %s, want 200 text/event-stream", o.req, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	o.p = newSSEParser(resp.Body)
	// retry: 60000 comes first only when the stream is compacted at once.
	if m, err := o.p.Next(); err != nil || !m.HasRetry || m.Retry != 1000 && m.Retry != 60000 || m.HasData {
		tb.Fatalf("%s: first block %v (%v), want retry: 1000 alone", o.req, m, err)
	}
	return o
}

// next returns the next observation, as "key=value@rev" or "none@rev"
// (or "canceled: reason" and "compacted"), after checking it: an id that
// is its header's revision, above the previous one; a kv exactly for the
// default message; a body that is an ObserveMessage of the document.
func (o *observer) next() string {
	o.tb.Helper()
	for {
		m, err := o.p.Next()
		if err != nil {
			o.tb.Fatalf("%s after id %d: %v", o.req, o.lastID, err)
		}
		if !m.HasData && !m.HasRetry {
			continue // a keep-alive
		}
		if m.HasRetry && (m.HasData || m.Retry != 60000) {
			o.tb.Fatalf("%s: %v, want retry: 60000 alone before compacted", o.req, m)
		}
		if m.HasRetry {
			continue
		}
		doc, _, err := e2e.LoadAPIDoc()
		if err == nil {
			err = e2e.MatchSchema(doc, "ObserveMessage", []byte(m.Data))
		}
		if err == nil {
			err = e2e.CheckTwins([]byte(m.Data))
		}
		// The message's kind: the leader (the default event, with kv),
		// no_leader (without: refused if it has one), canceled or
		// compacted, in the generated client's types.
		var header *client.ResponseHeader
		var kv *client.KeyValue
		var canceled client.WatchCanceled
		switch m.Event {
		case "":
			var v client.ObserveLeader
			err = cmp.Or(err, e2e.DecodeKind([]byte(m.Data), false, &v))
			header, kv = &v.Header, &v.Kv
		case "no_leader":
			var v client.ObserveNoLeader
			err = cmp.Or(err, e2e.DecodeKind([]byte(m.Data), true, &v))
			header = &v.Header
		case "canceled":
			err = cmp.Or(err, e2e.DecodeKind([]byte(m.Data), false, &canceled))
		case "compacted":
		default:
			err = cmp.Or(err, fmt.Errorf("unknown event %q", m.Event))
		}
		if err != nil {
			o.tb.Fatalf("%s: %v: not an ObserveMessage of the document (%v)", o.req, m, err)
		}
		switch m.Event {
		case "canceled":
			return "canceled: " + canceled.Reason
		case "compacted":
			return "compacted"
		}
		id, err := strconv.ParseInt(m.ID, 10, 64)
		switch {
		case err != nil || header.Revision != id:
			o.tb.Fatalf("%s: %v: want an id equal to header.revision", o.req, m)
		case id <= o.lastID:
			o.tb.Fatalf("%s: %v: id %d after id %d, want ids to increase", o.req, m, id, o.lastID)
		}
		o.lastID = id
		if kv == nil {
			return fmt.Sprintf("none@%d", id)
		}
		return fmt.Sprintf("%s=%s@%d", e2e.KeyOf(kv), e2e.ValueOf(kv), id)
	}
}

// until reads observations up to and including the one that starts with
// last.
func (o *observer) until(last string) []string {
	o.tb.Helper()
	var got []string
	for len(got) == 0 || !strings.HasPrefix(got[len(got)-1], last) {
		got = append(got, o.next())
	}
	return got
}

// TestElectionLeadersCrash runs an election whose leaders crash, two by
// lease expiry, then one that proclaims and resigns, while one observer
// reads throughout and another disconnects twice and resumes each time
// with Last-Event-ID: both see every change of leader once, in order, at
// the revision the history shows it happened.
//
// Every order it relies on it makes: a candidate is queued before the
// next one campaigns, and a leader's lease is renewed until what needs
// it to lead has been seen, and only then left to expire.
func TestElectionLeadersCrash(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	steady := openObserver(t, s, "svc", 0)
	start := steady.next()
	if !strings.HasPrefix(start, "none@") {
		t.Fatalf("the first observation of an empty election is %q, want none", start)
	}

	first := s.GrantLease(t, 5)
	crashFirst := s.KeepAlive(t, first)
	r, err := s.Campaign(context.Background(), "svc", first, "one")
	if err != nil {
		t.Fatal(err)
	}
	l1 := leading(t, r)
	second := s.GrantLease(t, 5)
	crashSecond := s.KeepAlive(t, second)
	won2 := s.CampaignAsync("svc", second, "two")
	s.WaitQueue(t, "svc", 2) // "two" is queued before "three" campaigns
	third := s.GrantLease(t, 600)
	won3 := s.CampaignAsync("svc", third, "three")
	s.WaitQueue(t, "svc", 3)

	resumed := openObserver(t, s, "svc", 0)
	seen := []string{resumed.next()}
	resumed.close()

	crashFirst() // its lease expires within 5s: the second leads
	l2 := leading(t, <-won2)
	resumed = openObserver(t, s, "svc", resumed.lastID)
	seen = append(seen, resumed.next())
	resumed.close()
	crashSecond() // the third leads

	l3 := leading(t, <-won3)
	s.Do(t, "POST", "/v1/elections/svc/proclaim", []byte(`{"leader":`+leaderJSON(l3)+`,"value":"three-b"}`)).Want(t, http.StatusOK)
	s.Do(t, "POST", "/v1/elections/svc/resign", []byte(`{"leader":`+leaderJSON(l3)+`}`)).Want(t, http.StatusOK)
	r, err = s.Campaign(context.Background(), "svc", s.GrantLease(t, 600), "four")
	if err != nil {
		t.Fatal(err)
	}
	l4 := leading(t, r)

	resumed = openObserver(t, s, "svc", resumed.lastID)
	seen = append(seen, resumed.until(e2e.Deref(l4.Key))...)
	all := steady.until(e2e.Deref(l4.Key))

	startRev, _ := strconv.ParseInt(strings.TrimPrefix(start, "none@"), 10, 64)
	want := s.Leadership(t, "svc", startRev)
	wantKeys := []string{e2e.Deref(l1.Key) + "=one", e2e.Deref(l2.Key) + "=two", e2e.Deref(l3.Key) + "=three", e2e.Deref(l3.Key) + "=three-b", "none", e2e.Deref(l4.Key) + "=four"}
	var gotKeys []string
	for _, o := range all {
		who, _, _ := strings.Cut(o, "@")
		gotKeys = append(gotKeys, who)
	}
	if !slices.Equal(all, want) || !slices.Equal(gotKeys, wantKeys) {
		t.Fatalf("the steady observer saw\n%q\nwant, from the history,\n%q\n(leaders %q)", all, want, wantKeys)
	}
	// The resumed observer's first message is the state when it opened,
	// at that revision; the rest are the changes.
	firstWho, _, _ := strings.Cut(seen[0], "@")
	if firstWho != e2e.Deref(l1.Key)+"=one" || !slices.Equal(seen[1:], want[1:]) {
		t.Fatalf("the observer that resumed twice saw\n%q\nwant %s=one, then\n%q", seen, e2e.Deref(l1.Key), want[1:])
	}
}

// TestElectionOnlyLeaderProclaims: a candidate that waits presents its
// own candidacy (its key, create revision and lease) to proclaim and to
// resign: both answer 412 not_leader and change nothing, and once it
// leads, observers see the value it campaigned with, which it may then
// proclaim anew.
func TestElectionOnlyLeaderProclaims(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	r, err := s.Campaign(context.Background(), "office", s.GrantLease(t, 600), "first")
	if err != nil {
		t.Fatal(err)
	}
	first := leading(t, r)
	waiter := s.GrantLease(t, 600)
	won := s.CampaignAsync("office", waiter, "second")
	s.WaitQueue(t, "office", 2)
	key := fmt.Sprintf("office/%x", waiter)
	queued := s.Get(t, key)
	name := "office"
	candidate := leaderJSON(client.LeaderKey{Name: &name, Key: &key, Revision: queued.CreateRevision, Lease: waiter})
	s.Do(t, "POST", "/v1/elections/office/proclaim", []byte(`{"leader":`+candidate+`,"value":"usurper"}`)).WantError(t, http.StatusPreconditionFailed, "not_leader")
	s.Do(t, "POST", "/v1/elections/office/resign", []byte(`{"leader":`+candidate+`}`)).WantError(t, http.StatusPreconditionFailed, "not_leader")
	if kv := s.Get(t, key); e2e.ValueOf(&kv) != "second" || kv.ModRevision != queued.ModRevision {
		t.Fatalf("after the waiting candidate's refused proclaim and resign: %s = %q at %d, want %q at %d unchanged",
			key, e2e.ValueOf(&kv), kv.ModRevision, "second", queued.ModRevision)
	}

	o := openObserver(t, s, "office", 0)
	if got := o.next(); !strings.HasPrefix(got, e2e.Deref(first.Key)+"=first@") {
		t.Fatalf("the observer's first message is %q, want %s=first", got, e2e.Deref(first.Key))
	}
	s.Do(t, "POST", "/v1/elections/office/resign", []byte(`{"leader":`+leaderJSON(first)+`}`)).Want(t, http.StatusOK)
	second := leading(t, <-won)
	if got := o.next(); !strings.HasPrefix(got, key+"=second@") {
		t.Fatalf("once the waiting candidate leads, the observer sees %q, want %s=second", got, key)
	}
	if second.Revision != queued.CreateRevision {
		t.Fatalf("the candidate leads as %s, want the candidacy created at %d", leaderJSON(second), queued.CreateRevision)
	}
	s.Do(t, "POST", "/v1/elections/office/proclaim", []byte(`{"leader":`+candidate+`,"value":"second-b"}`)).Want(t, http.StatusOK)
	if got := o.next(); !strings.HasPrefix(got, key+"=second-b@") {
		t.Fatalf("after the new leader proclaimed, the observer sees %q, want %s=second-b", got, key)
	}
}

// TestObserveEnds: observe ends with compacted when resuming below the
// compact revision, and with canceled when the server shuts down.
func TestObserveEnds(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	s.Put(t, "a", "1")
	rev := s.Put(t, "a", "2")
	s.Do(t, "POST", "/v1/compact", fmt.Appendf(nil, `{"revision":%d,"physical":true}`, rev)).Want(t, http.StatusOK)
	if got := openObserver(t, s, "e", rev-1).next(); got != "compacted" {
		t.Errorf("observe after %d, below the compact revision %d: %q, want compacted", rev-1, rev, got)
	}
	o := openObserver(t, s, "e", rev)
	s.Stop()
	if got := o.next(); got != "canceled: shutting down" {
		t.Errorf("observe at shutdown: %q, want canceled: shutting down", got)
	}
}
