package httpapi

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/internal/waittest"
	"github.com/httpkv/httpkv/internal/wiretest"
	"github.com/httpkv/httpkv/wire"
)

// campaignHTTP campaigns in name for lease with value and returns the
// leader answered.
func campaignHTTP(tb testing.TB, h http.Handler, name string, lease int64, value string) wire.LeaderKey {
	tb.Helper()
	return decodeCampaign(tb, mustServe(tb, h, http.StatusOK, "POST", campaignTarget(name), campaignBody(lease, value)))
}

func campaignTarget(name string) string { return "/v1/elections/" + name + "/campaign?timeout=1m" }

func campaignBody(lease int64, value string) string {
	return fmt.Sprintf(`{"lease":%d,"value":%q}`, lease, value)
}

// decodeCampaign checks a campaign's answer and returns its leader.
func decodeCampaign(tb testing.TB, rec *httptest.ResponseRecorder) wire.LeaderKey {
	tb.Helper()
	if rec.Code != http.StatusOK {
		tb.Fatalf("campaign = %d %s, want 200", rec.Code, rec.Body)
	}
	var b wire.CampaignResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil {
		tb.Fatalf("campaign = %s: %v", rec.Body, err)
	}
	return b.Leader
}

func leaderJSONOf(l wire.LeaderKey) string {
	b, _ := json.Marshal(l)
	return string(b)
}

// currentLeader reads GET leader: the leader's key and value.
func currentLeader(tb testing.TB, h http.Handler, name string) wire.KeyValue {
	tb.Helper()
	rec := mustServe(tb, h, http.StatusOK, "GET", "/v1/elections/"+name+"/leader", "")
	var b wire.GetResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil {
		tb.Fatalf("leader = %s: %v", rec.Body, err)
	}
	return b.KV
}

func TestElectionHTTP(t *testing.T) {
	h, e := newLocksHandler(t)
	if rec := serve(t, h, "GET", "/v1/elections/db/leader", ""); rec.Code != 404 || errorCode(t, rec) != "no_leader" {
		t.Fatalf("leader of an empty election = %d %s, want 404 no_leader", rec.Code, rec.Body)
	}
	a := e.Grant(t, 60)
	la := campaignHTTP(t, h, "db", a, "host-a")
	if la.Name != "db" || la.Key != fmt.Sprintf("db/%x", a) || la.Lease != a || la.Revision < 1 {
		t.Fatalf("campaign = %+v, want db, db/%x, lease %d", la, a, a)
	}
	if kv := currentLeader(t, h, "db"); wiretest.Key(kv) != la.Key || wiretest.Value(kv) != "host-a" || kv.CreateRevision != la.Revision {
		t.Fatalf("leader = %+v, want %s = host-a created at %d", kv, la.Key, la.Revision)
	}
	mustServe(t, h, http.StatusOK, "POST", "/v1/elections/db/proclaim", `{"leader":`+leaderJSONOf(la)+`,"value_base64":"/w=="}`)
	if kv := currentLeader(t, h, "db"); wiretest.Value(kv) != "\xff" {
		t.Fatalf("leader after proclaiming \\xff = %+v", kv)
	}
	b := e.Grant(t, 60)
	next := goServe(t, h, "POST", campaignTarget("db"), campaignBody(b, "host-b"))
	if !waittest.For(streamTimeout, func() bool { return len(listKeys(t, h, "key=db/&prefix=true")) == 2 }) {
		t.Fatalf("the second candidate is not queued")
	}
	mustServe(t, h, http.StatusOK, "POST", "/v1/elections/db/resign", `{"leader":`+leaderJSONOf(la)+`}`)
	if lb := decodeCampaign(t, <-next); lb.Key != fmt.Sprintf("db/%x", b) {
		t.Fatalf("after the leader resigned, the campaign answered %+v, want db/%x", lb, b)
	}
	for _, tt := range []struct {
		target, body string
		status       int
		code         string
	}{
		{"/v1/elections/db/proclaim", `{"leader":` + leaderJSONOf(la) + `,"value":"x"}`, 412, "not_leader"},
		{"/v1/elections/db/resign", `{"leader":` + leaderJSONOf(la) + `}`, 412, "not_leader"},
		{"/v1/elections/db/resign", `{}`, 400, "invalid_argument"},
		{"/v1/elections/other/resign", `{"leader":` + leaderJSONOf(la) + `}`, 400, "invalid_argument"},
		{"/v1/elections/db/resign", `{"leader":{"key":"db/1","revision":1}}`, 400, "invalid_argument"},
		{"/v1/elections/db/resign", `{"leader":{"key":"other/1","revision":1,"lease":1}}`, 400, "invalid_argument"},
		{"/v1/elections/db/campaign?timeout=0s", fmt.Sprintf(`{"lease":%d}`, a), 408, "lock_timeout"},
		{"/v1/elections/db/campaign", `{"lease":1,"value":"a","value_base64":"YQ=="}`, 400, "invalid_argument"},
		{"/v1/elections/db/elect", `{}`, 404, "not_found"},
	} {
		rec := serve(t, h, "POST", tt.target, tt.body)
		if rec.Code != tt.status || errorCode(t, rec) != tt.code {
			t.Errorf("POST %s %s = %d %s, want %d %s", tt.target, tt.body, rec.Code, rec.Body, tt.status, tt.code)
		}
	}
}

// expectObservation reads one observe message and checks its framing: a
// default message with the leader's key and value, or no_leader ("" for
// key), with id the header's revision. It returns that revision.
func expectObservation(tb testing.TB, s *sseReader, key, value string) int64 {
	tb.Helper()
	m := s.next(tb, streamTimeout)
	var header wire.ResponseHeader
	switch {
	case key == "" && m.Event != "no_leader":
		tb.Fatalf("observe message %q, want event: no_leader without kv", m.Raw)
	case key == "":
		// Strict: a kv in it is refused.
		header = wiretest.Decode[observeNoLeaderDoc](tb, "observe message "+m.Raw, []byte(m.Data)).Header
	case m.Event != "":
		tb.Fatalf("observe message %q, want a default message with %s = %s", m.Raw, key, value)
	default:
		d := wiretest.Decode[observeLeaderDoc](tb, "observe message "+m.Raw, []byte(m.Data))
		if wiretest.Key(d.KV) != key || wiretest.Value(d.KV) != value {
			tb.Fatalf("observe message %q, want a default message with %s = %s", m.Raw, key, value)
		}
		header = d.Header
	}
	if !m.HasID || m.ID != strconv.FormatInt(header.Revision, 10) || header.Revision < 1 {
		tb.Fatalf("observe message %q: want an id that is its header's revision", m.Raw)
	}
	return header.Revision
}

// TestObserveHTTP follows an election over HTTP/1 (a stream that takes
// its connection over) and HTTP/2: framing, resumption with
// Last-Event-ID, and the end of the stream at shutdown.
func TestObserveHTTP(t *testing.T) {
	for _, proto := range []string{"HTTP/1.1", "HTTP/2"} {
		t.Run(proto, func(t *testing.T) {
			h, e := newLocksHandler(t)
			srv := httptest.NewUnstartedServer(h)
			srv.EnableHTTP2 = proto == "HTTP/2"
			srv.StartTLS()
			defer srv.Close()
			client := srv.Client()
			if proto == "HTTP/1.1" {
				client.Transport.(*http.Transport).TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
			}
			if resp, err := client.Get(srv.URL + "/health"); err != nil || resp.ProtoMajor != int(proto[5]-'0') {
				t.Fatalf("GET /health over %s: %v, %v", proto, resp, err)
			} else {
				resp.Body.Close()
			}
			s := openWatch(t, client, srv, "/v1/elections/ob/observe")
			start := expectObservation(t, s, "", "")
			a := e.Grant(t, 60)
			la := campaignHTTP(t, h, "ob", a, "a")
			if rev := expectObservation(t, s, la.Key, "a"); rev != la.Revision {
				t.Fatalf("the campaign's observation has revision %d, want its key's create revision %d", rev, la.Revision)
			}
			b := e.Grant(t, 60)
			won := goServe(t, h, "POST", campaignTarget("ob"), campaignBody(b, "b"))
			if !waittest.For(streamTimeout, func() bool { return len(listKeys(t, h, "key=ob/&prefix=true")) == 2 }) {
				t.Fatalf("the second candidate is not queued")
			}
			if err := e.Revoke(a); err != nil {
				t.Fatal(err)
			}
			crashed := expectObservation(t, s, fmt.Sprintf("ob/%x", b), "b")
			decodeCampaign(t, <-won)
			if err := e.Revoke(b); err != nil {
				t.Fatal(err)
			}
			empty := expectObservation(t, s, "", "")

			// Resuming after the first message sees every later one again,
			// and nothing before.
			r := openWatch(t, client, srv, "/v1/elections/ob/observe", "Last-Event-ID", strconv.FormatInt(start, 10))
			expectObservation(t, r, la.Key, "a")
			if got := expectObservation(t, r, fmt.Sprintf("ob/%x", b), "b"); got != crashed {
				t.Fatalf("the resumed stream has the second leader at %d, want %d", got, crashed)
			}
			if got := expectObservation(t, r, "", ""); got != empty {
				t.Fatalf("the resumed stream has the office empty at %d, want %d", got, empty)
			}

			h.Close()
			for _, st := range []*sseReader{s, r} {
				m := st.next(t, streamTimeout)
				if m.Event != "canceled" || m.Data != `{"type":"canceled","reason":"shutting down"}` {
					t.Fatalf("after Close: %q, want event: canceled, shutting down", m.Raw)
				}
			}
		})
	}
}

func TestObserveCompactedHTTP(t *testing.T) {
	h, _ := newLocksHandler(t)
	mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/a", "1")
	rec := mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/a", "2")
	rev := rec.Header().Get("X-Revision")
	mustServe(t, h, http.StatusOK, "POST", "/v1/compact", `{"revision":`+rev+`,"physical":true}`)
	rec = serve(t, h, "GET", "/v1/elections/x/observe", "", "Last-Event-ID", "1")
	s := newSSEReader(strings.NewReader(rec.Body.String()))
	m := s.next(t, streamTimeout)
	var d watchCompactedDoc
	_ = json.Unmarshal([]byte(m.Data), &d)
	if rec.Code != 200 || m.Event != "compacted" || !strings.HasPrefix(rec.Body.String(), "retry: 60000\n") || strconv.FormatInt(d.CompactRevision, 10) != rev {
		t.Fatalf("observe after a compacted revision = %d %q, want 200 and event: compacted at %s", rec.Code, rec.Body, rev)
	}
	if rec := serve(t, h, "GET", "/v1/elections/x/observe", "", "Last-Event-ID", "99"); rec.Code != 400 || errorCode(t, rec) != "future_revision" {
		t.Fatalf("observe after a future revision = %d %s, want 400 future_revision", rec.Code, rec.Body)
	}
	if rec := serve(t, h, "GET", "/v1/elections/x/observe", "", "Last-Event-ID", "x"); rec.Code != 400 || errorCode(t, rec) != "invalid_argument" {
		t.Fatalf("observe with Last-Event-ID x = %d %s, want 400 invalid_argument", rec.Code, rec.Body)
	}
}

// FuzzElectionRequests feeds arbitrary bodies to the lock and election
// routes and arbitrary Last-Event-ID headers to observe: each is answered
// (a 2xx, or a 4xx with a code), never with a 500.
func FuzzElectionRequests(f *testing.F) {
	h, e := newLocksHandler(f)
	id := e.Grant(f, 60)
	leader := campaignHTTP(f, h, "f", id, "v")
	for _, s := range []string{fmt.Sprintf(`{"lease":%d}`, id), fmt.Sprintf(`{"lease":%d,"value":"x"}`, id),
		`{"leader":` + leaderJSONOf(leader) + `,"value_base64":"eA=="}`, `{"leader":null}`, `{"leader":{"name_base64":"!"}}`,
		`{"lease":1e3}`, `{}`, `null`, `[]`, `{"lease":1}}`, "{\"lease\":1}\x00"} {
		f.Add([]byte(s), "")
	}
	for _, s := range []string{"0", "1", "3", " 2 ", "-1", "x", "9223372036854775807"} {
		f.Add([]byte{}, s)
	}
	check := func(t *testing.T, rec *httptest.ResponseRecorder, what string) {
		if rec.Code >= 500 || rec.Code >= 300 && errorCode(t, rec) == "" {
			t.Fatalf("%s = %d %s", what, rec.Code, rec.Body)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte, lastEventID string) {
		for _, target := range []string{"/v1/locks/f?timeout=0s", "/v1/elections/f/campaign?timeout=0s",
			"/v1/elections/f/proclaim", "/v1/elections/f/resign"} {
			check(t, serve(t, h, "POST", target, string(body)), fmt.Sprintf("POST %s %q", target, body))
		}
		// With its context done, the stream answers its first lines and
		// returns.
		done, cancel := context.WithCancel(context.Background())
		cancel()
		req := httptest.NewRequest("GET", "/v1/elections/f/observe", nil).WithContext(done)
		req.Header.Set("Last-Event-ID", lastEventID)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		check(t, rec, fmt.Sprintf("observe with Last-Event-ID %q", lastEventID))
	})
}
