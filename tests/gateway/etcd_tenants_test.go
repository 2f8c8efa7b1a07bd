package gateway

import (
	"context"
	"encoding/json"
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

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/httpkv/httpkv/internal/etcdtest"
	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// Tests of deployments that share one etcd cluster, each in a namespace
// of its own (API.md, "Backends"): nothing one can name reaches another.

// tenant is one deployment of a shared cluster: its gateway and who acts
// through it (root and bob with auth on; no one, with no token, with it
// off).
type tenant struct {
	ns        string
	s         *e2e.Server
	root, bob e2e.AuthCaller
	leases    []int64 // granted through it, for the lists
}

// do sends a request as c and fails unless it answers want.
func (tn *tenant) do(tb testing.TB, c e2e.AuthCaller, want int, method, path, body string) *e2e.Reply {
	tb.Helper()
	var b []byte
	if body != "" {
		b = []byte(body)
	}
	return tn.s.Do(tb, method, path, b, c.Header("Content-Type", "application/json")...).Want(tb, want)
}

// grant grants a lease of 600 s as c.
func (tn *tenant) grant(tb testing.TB, c e2e.AuthCaller) int64 {
	tb.Helper()
	var l client.LeaseResponse
	tn.do(tb, c, http.StatusCreated, "POST", "/v1/leases", `{"ttl":600}`).Decode(tb, &l)
	tn.leases = append(tn.leases, l.Id)
	return l.Id
}

// withAuth makes root and bob, bob with readwrite on the prefix bob/
// only, enables auth and logs both in.
func (tn *tenant) withAuth(tb testing.TB, rootPassword, bobPassword string) {
	tb.Helper()
	none := e2e.AuthCaller{}
	tn.do(tb, none, http.StatusCreated, "POST", "/v1/auth/users", fmt.Sprintf(`{"name":"bob","password":%q}`, bobPassword))
	tn.do(tb, none, http.StatusCreated, "POST", "/v1/auth/roles", `{"name":"bob-rw"}`)
	tn.do(tb, none, http.StatusOK, "POST", "/v1/auth/roles/bob-rw/permissions", `{"key":"bob/","prefix":true,"type":"readwrite"}`)
	tn.do(tb, none, http.StatusOK, "PUT", "/v1/auth/users/bob/roles/bob-rw", "")
	e2e.EnableAuth(tb, tn.s, rootPassword)
	tn.root = e2e.AuthCaller{Name: "root of " + tn.ns, Token: e2e.AuthLogin(tb, tn.s, "root", rootPassword)}
	tn.bob = e2e.AuthCaller{Name: "bob of " + tn.ns, Token: e2e.AuthLogin(tb, tn.s, "bob", bobPassword)}
}

// state is every key of the deployment, as root reads it: key, value,
// lease and revisions.
func (tn *tenant) state(tb testing.TB) []string {
	tb.Helper()
	var l client.ListResponse
	tn.do(tb, tn.root, http.StatusOK, "GET", "/v1/kv?limit=10000", "").Decode(tb, &l)
	var out []string
	for _, kv := range l.Kvs {
		out = append(out, fmt.Sprintf("%s=%s lease %d @%d/%d", e2e.KeyOf(&kv), e2e.ValueOf(&kv), kv.Lease, kv.CreateRevision, kv.ModRevision))
	}
	return out
}

// keys lists the keys the selector query names, through the deployment,
// as c.
func (tn *tenant) keys(tb testing.TB, c e2e.AuthCaller, query string) []string {
	tb.Helper()
	var l client.ListResponse
	tn.do(tb, c, http.StatusOK, "GET", "/v1/kv?"+query, "").Decode(tb, &l)
	return e2e.ListKeys(l)
}

// listedLeases lists the deployment's leases as c, one to a page.
func (tn *tenant) listedLeases(tb testing.TB, c e2e.AuthCaller) []int64 {
	tb.Helper()
	var ids []int64
	path := "/v1/leases?limit=1"
	for range 100 {
		var page client.LeaseList
		tn.do(tb, c, http.StatusOK, "GET", path, "").Decode(tb, &page)
		for _, l := range page.Leases {
			ids = append(ids, l.Id)
		}
		if !page.More {
			return ids
		}
		path = "/v1/leases?limit=1&page_token=" + url.QueryEscape(*page.NextPageToken)
	}
	tb.Fatalf("%s lists more than 100 leases", tn.ns)
	return nil
}

// TestTenants runs three deployments on one etcd cluster, as a team runs
// several services on one: /httpkv/ with auth off, /migrated/ and /third/
// with auth on, each with a user bob allowed readwrite on bob/ only. Each
// deployment, as its most privileged caller and as bob, tries every
// endpoint against the others' keys, leases, locks, streams, users and
// snapshots, and against leases granted through etcd itself (one of them
// above 2^53-1): nothing answers with another's data, and nothing of
// another changes.
//
// It reproduces the permission bypass of the gateways before leases had
// records: bob of /third/ revoked a lease of /migrated/ through /third/,
// which deleted /migrated/'s lock key and b-config, because the guard
// was shown the lease's keys inside /third/ alone, none.
func TestTenants(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	cli := c.Client(t)
	ctx := context.Background()
	open := &tenant{ns: "/httpkv/", s: startGateway(t, c, "/httpkv/", e2e.AuthBcryptCost)}
	victim := &tenant{ns: "/migrated/", s: startGateway(t, c, "/migrated/", e2e.AuthBcryptCost)}
	third := &tenant{ns: "/third/", s: startGateway(t, c, "/third/", e2e.AuthBcryptCost)}
	victim.withAuth(t, "b-root-secret", "bob-b-secret")
	third.withAuth(t, "c-root-secret", "bob-c-secret")

	// /migrated/: services/db on a lease of root's; bob holds the lock
	// bob/lock with a lease of his, which root also gave b-config.
	vr, vb := victim.root, victim.bob
	dbLease := victim.grant(t, vr)
	victim.do(t, vr, http.StatusOK, "PUT", fmt.Sprintf("/v1/kv/services/db?lease=%d", dbLease), "b-db")
	bobLease := victim.grant(t, vb)
	victim.do(t, vb, http.StatusOK, "POST", "/v1/locks/bob%2Flock", fmt.Sprintf(`{"lease":%d}`, bobLease))
	victim.do(t, vr, http.StatusOK, "PUT", fmt.Sprintf("/v1/kv/b-config?lease=%d", bobLease), "b-secret")
	var stream struct{ Stream string }
	victim.do(t, vb, http.StatusCreated, "POST", "/v1/watch/streams", "").Decode(t, &stream)
	// bob may not revoke his own lease there: it holds b-config.
	e2e.WantRefused(t, victim.do(t, vb, http.StatusForbidden, "DELETE", fmt.Sprintf("/v1/leases/%d", bobLease), ""), false)

	// /httpkv/ and /third/ have keys and leases of their own.
	none := e2e.AuthCaller{Name: "no token"}
	open.do(t, none, http.StatusOK, "PUT", "/v1/kv/services/db", "a-db")
	openLease := open.grant(t, none)
	open.do(t, none, http.StatusOK, "PUT", fmt.Sprintf("/v1/kv/a/leased?lease=%d", openLease), "a")
	thirdLease := third.grant(t, third.bob)
	third.do(t, third.bob, http.StatusOK, "PUT", fmt.Sprintf("/v1/kv/bob/c?lease=%d", thirdLease), "c")

	// Leases granted through etcd itself, no deployment's.
	const big = 1418812132488573291 // above 2^53-1
	for _, id := range []int64{big, 4242} {
		resp, err := clientv3.RetryLeaseClient(cli).LeaseGrant(ctx, &pb.LeaseGrantRequest{ID: id, TTL: 600})
		if err != nil || resp.Error != "" {
			t.Fatalf("LeaseGrant(%d) through etcd = %v, %v", id, resp, err)
		}
	}
	victimState := victim.state(t)
	if len(victimState) != 3 {
		t.Fatalf("/migrated/ holds %q, want services/db, b-config and bob's lock key", victimState)
	}

	t.Run("the bypass", func(t *testing.T) {
		third.s.Do(t, "DELETE", fmt.Sprintf("/v1/leases/%d", bobLease), nil, third.bob.Header()...).
			WantError(t, http.StatusNotFound, "lease_not_found")
		if got := victim.state(t); !slices.Equal(got, victimState) {
			t.Fatalf("after bob of /third/ revoked lease %d of /migrated/ through /third/: /migrated/ holds %q, want %q", bobLease, got, victimState)
		}
	})

	type attacker struct {
		tn *tenant
		as e2e.AuthCaller
	}
	attackers := []attacker{{open, none}, {third, third.root}, {third, third.bob}}
	t.Run("foreign leases", func(t *testing.T) {
		for _, at := range attackers {
			for _, id := range []int64{dbLease, bobLease, 4242} {
				h := at.as.Header("Content-Type", "application/json")
				s := at.tn.s
				for _, req := range []struct{ method, path, body string }{
					{"GET", fmt.Sprintf("/v1/leases/%d", id), ""},
					{"GET", fmt.Sprintf("/v1/leases/%d?keys=true", id), ""},
					{"POST", fmt.Sprintf("/v1/leases/%d/keepalive", id), ""},
					{"DELETE", fmt.Sprintf("/v1/leases/%d", id), ""},
					{"PUT", fmt.Sprintf("/v1/kv/bob/x?lease=%d", id), "x"},
					{"POST", "/v1/txn", fmt.Sprintf(`{"success":[{"put":{"key":"bob/y","value":"y"}},{"put":{"key":"bob/x","value":"x","lease":%d}}]}`, id)},
					{"POST", "/v1/locks/bob%2Fl?timeout=1s", fmt.Sprintf(`{"lease":%d}`, id)},
					{"POST", "/v1/elections/bob%2Fe/campaign?timeout=1s", fmt.Sprintf(`{"lease":%d,"value":"v"}`, id)},
				} {
					r := s.Do(t, req.method, req.path, []byte(req.body), h...)
					if r.Status != http.StatusNotFound || !strings.Contains(string(r.Body), `"lease_not_found"`) {
						t.Errorf("%s as %s on %s = %d %s, want 404 lease_not_found", r.Req, at.as.Name, at.tn.ns, r.Status, r.Body)
					}
				}
				// IDs are the cluster's: a grant of a taken one is refused,
				// and changes nothing.
				s.Do(t, "POST", "/v1/leases", []byte(fmt.Sprintf(`{"ttl":5,"id":%d}`, id)), h...).
					WantError(t, http.StatusConflict, "already_exists")
			}
			// An ID above 2^53-1 is no API's ID at all.
			h := at.as.Header("Content-Type", "application/json")
			for _, req := range []struct{ method, path, body string }{
				{"GET", fmt.Sprintf("/v1/leases/%d", uint64(big)), ""},
				{"POST", fmt.Sprintf("/v1/leases/%d/keepalive", uint64(big)), ""},
				{"DELETE", fmt.Sprintf("/v1/leases/%d", uint64(big)), ""},
				{"PUT", fmt.Sprintf("/v1/kv/bob/x?lease=%d", uint64(big)), "x"},
				{"POST", "/v1/txn", fmt.Sprintf(`{"success":[{"put":{"key":"bob/x","value":"x","lease":%d}}]}`, uint64(big))},
			} {
				r := at.tn.s.Do(t, req.method, req.path, []byte(req.body), h...)
				if r.Status != http.StatusNotFound && r.Status != http.StatusBadRequest {
					t.Errorf("%s as %s on %s = %d %s, want 400 or 404", r.Req, at.as.Name, at.tn.ns, r.Status, r.Body)
				}
			}
		}
		for _, tn := range []*tenant{open, victim, third} {
			caller := tn.root
			if tn == open {
				caller = none
			}
			if got, want := tn.listedLeases(t, caller), slices.Sorted(slices.Values(tn.leases)); !slices.Equal(got, want) {
				t.Errorf("%s lists the leases %v, want its own %v", tn.ns, got, want)
			}
			if tn.bob.Token != "" {
				if got := tn.listedLeases(t, tn.bob); len(got) != len(tn.leases) {
					t.Errorf("%s lists bob the leases %v, want its own %v", tn.ns, got, tn.leases)
				}
			}
		}
		if got := victim.state(t); !slices.Equal(got, victimState) {
			t.Errorf("/migrated/ holds %q, want %q", got, victimState)
		}
		for _, id := range []int64{dbLease, bobLease, 4242, big} {
			if resp, err := cli.TimeToLive(ctx, clientv3.LeaseID(id)); err != nil || resp.TTL <= 0 {
				t.Errorf("lease %d after the others' calls: %v, %v; want it alive", id, resp, err)
			}
		}
		for _, tn := range []*tenant{open, third} {
			caller := tn.root
			if tn == open {
				caller = none
			}
			if got := tn.keys(t, caller, "key=bob/&prefix=true"); slices.Contains(got, "bob/x") || slices.Contains(got, "bob/y") {
				t.Errorf("%s holds %q after its refused writes", tn.ns, got)
			}
		}
	})

	t.Run("keys", func(t *testing.T) {
		want := map[*tenant][]string{
			open:  {"a/leased", "services/db"},
			third: {"bob/c"},
		}
		for _, tn := range []*tenant{open, third} {
			caller := tn.root
			if tn == open {
				caller = none
			}
			// Every spelling of every key, and the edges of the key
			// space: none leaves the namespace.
			for _, sel := range []string{"", "prefix=true", "key_base64=AA%3D%3D&from_key=true",
				"key_base64=AA%3D%3D&range_end_base64=AA%3D%3D", "key=%2F&range_end_base64=AA%3D%3D",
				"key_base64=AP8%3D&from_key=true", "key_base64=AA%3D%3D&range_end_base64=%2F%2F%2F%2F"} {
				if got := tn.keys(t, caller, sel); !slices.Equal(got, want[tn]) {
					t.Errorf("%s: GET /v1/kv?%s = %q, want %q", tn.ns, sel, got, want[tn])
				}
			}
			if got := tn.keys(t, caller, "key_base64=%2F%2F8%3D&from_key=true"); len(got) != 0 {
				t.Errorf("%s: the keys from \xff\xff on = %q, want none", tn.ns, got)
			}
			var txn client.TxnResponse
			tn.do(t, caller, http.StatusOK, "POST", "/v1/txn", `{"compare":[{"key_base64":"AA==","range_end_base64":"AA==","target":"version","result":"greater","version":0}],`+
				`"success":[{"range":{"key_base64":"AA==","range_end_base64":"AA=="}}],"failure":[{"range":{"key_base64":"AA==","range_end_base64":"AA=="}}]}`).Decode(t, &txn)
			if rr := txn.Responses[0].Range; rr == nil || rr.Count != int64(len(want[tn])) {
				t.Errorf("%s: a txn's range of every key = %+v, want %d keys", tn.ns, txn.Responses[0], len(want[tn]))
			}
			var hist client.HistoryResponse
			tn.do(t, caller, http.StatusOK, "GET", "/v1/history?key_base64=AA%3D%3D&range_end_base64=AA%3D%3D", "").Decode(t, &hist)
			for _, ev := range hist.Events {
				if !slices.Contains(want[tn], e2e.KeyOf(&ev.Kv)) {
					t.Errorf("%s: the history of every key holds %s", tn.ns, e2e.KeyOf(&ev.Kv))
				}
			}
			var st client.Status
			tn.do(t, caller, http.StatusOK, "GET", "/v1/status", "").Decode(t, &st)
			if st.Keys != int64(len(want[tn])) || st.Leases != int64(len(tn.leases)) {
				t.Errorf("%s: status counts %d keys, %d leases; want its own %d, %d", tn.ns, st.Keys, st.Leases, len(want[tn]), len(tn.leases))
			}
		}
		// A watch of every key of /httpkv/ from its first revision sees
		// its own writes alone, while /migrated/ writes.
		w := openSSE(t, open.s, "key_base64=AA%3D%3D&range_end_base64=AA%3D%3D&start_revision=1", 0)
		victim.do(t, vr, http.StatusOK, "PUT", "/v1/kv/services/db2", "b")
		end := open.s.Put(t, "sentinel", "end")
		events, _ := w.upTo(t, "a watch of every key of /httpkv/", end, false)
		for _, ev := range events {
			if !strings.HasPrefix(ev, "a/leased=") && !strings.HasPrefix(ev, "services/db=a-db") && !strings.HasPrefix(ev, "sentinel=") {
				t.Errorf("a watch of every key of /httpkv/ got %s", ev)
			}
		}
		victim.do(t, vr, http.StatusOK, "DELETE", "/v1/kv/services/db2", "")
		// A delete of every key deletes the namespace's alone.
		var del client.DeleteResponse
		open.do(t, none, http.StatusOK, "DELETE", "/v1/kv?key_base64=AA%3D%3D&range_end_base64=AA%3D%3D", "").Decode(t, &del)
		if del.Deleted != 3 {
			t.Errorf("/httpkv/ deleted %d keys of every key, want its 3", del.Deleted)
		}
		if got := victim.state(t); !slices.Equal(got, victimState) {
			t.Errorf("/migrated/ holds %q, want %q", got, victimState)
		}
	})

	t.Run("private records", func(t *testing.T) {
		// Keys named as the gateway's own records are keys like any
		// other: they change none of its users or leases.
		authRev := func() int64 {
			resp, err := cli.Get(ctx, third.ns+"auth/rev")
			if err != nil || resp.Count != 1 {
				t.Fatalf("%sauth/rev: %v, %v", third.ns, resp, err)
			}
			return resp.Kvs[0].ModRevision
		}
		before := authRev()
		for _, path := range []string{"/v1/kv/auth/rev", fmt.Sprintf("/v1/kv/lease/%016x", 77), "/v1/kv/..%2Fauth%2Fkey", "/v1/kv/%2F..%2F..%2Fmigrated%2Fkv%2Fb-config"} {
			third.do(t, third.root, http.StatusOK, "PUT", path, "x")
		}
		if after := authRev(); after != before {
			t.Errorf("%sauth/rev changed at %d, after puts of keys named like it", third.ns, after)
		}
		e2e.AuthLogin(t, third.s, "bob", "bob-c-secret")
		third.do(t, third.bob, http.StatusOK, "GET", "/v1/kv/bob/c", "")
		if got := third.listedLeases(t, third.root); !slices.Equal(got, third.leases) {
			t.Errorf("/third/ lists %v, want %v", got, third.leases)
		}
		if got := victim.state(t); !slices.Equal(got, victimState) {
			t.Errorf("/migrated/ holds %q, want %q", got, victimState)
		}
		raw, err := cli.Get(ctx, "", clientv3.WithFromKey(), clientv3.WithKeysOnly())
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range raw.Kvs {
			if k := string(p.Key); !strings.HasPrefix(k, open.ns) && !strings.HasPrefix(k, victim.ns) && !strings.HasPrefix(k, third.ns) {
				t.Errorf("etcd holds %q, outside every namespace", k)
			}
		}
	})

	t.Run("users and tokens", func(t *testing.T) {
		var users struct{ Users []string }
		open.do(t, none, http.StatusOK, "GET", "/v1/auth/users", "").Decode(t, &users)
		if len(users.Users) != 0 {
			t.Errorf("/httpkv/ lists the users %q, want none", users.Users)
		}
		third.do(t, third.root, http.StatusOK, "GET", "/v1/auth/users", "").Decode(t, &users)
		if !slices.Equal(users.Users, []string{"bob", "root"}) {
			t.Errorf("/third/ lists the users %q, want its own bob and root", users.Users)
		}
		// A token of one deployment is nothing to another; a password
		// of one logs in nowhere else.
		for _, tc := range []struct {
			tn *tenant
			as e2e.AuthCaller
		}{{third, victim.root}, {third, victim.bob}, {victim, third.root}, {victim, third.bob}} {
			e2e.WantRefused(t, tc.tn.s.Do(t, "GET", "/v1/kv/bob/c", nil, tc.as.Header()...), true)
		}
		third.s.Do(t, "POST", "/v1/auth/token", []byte(`{"name":"bob","password":"bob-b-secret"}`)).
			WantError(t, http.StatusUnauthorized, "unauthenticated")
	})

	t.Run("streams", func(t *testing.T) {
		for _, at := range attackers {
			path := "/v1/watch/streams/" + stream.Stream
			at.tn.s.Do(t, "GET", path, nil, at.as.Header()...).WantError(t, http.StatusNotFound, "stream_not_found")
			at.tn.s.Do(t, "DELETE", path, nil, at.as.Header()...).WantError(t, http.StatusNotFound, "stream_not_found")
		}
		victim.do(t, vb, http.StatusOK, "DELETE", "/v1/watch/streams/"+stream.Stream, "")
	})

	t.Run("snapshots", func(t *testing.T) {
		for _, at := range []attacker{{open, none}, {third, third.root}} {
			r := at.tn.s.Do(t, "GET", "/v1/snapshot", nil, at.as.Header()...)
			r.WantError(t, http.StatusNotImplemented, "not_supported")
			if !strings.Contains(string(r.Body), "GET /v1/export") {
				t.Errorf("GET /v1/snapshot on %s = %s, want it to point at GET /v1/export", at.tn.ns, r.Body)
			}
		}
		file := filepath.Join(t.TempDir(), "cluster.snapshot")
		_, stderr, err := e2e.RunHTTPKV(t, nil, "snapshot", "save", "--url", open.s.URL, file)
		if err == nil || !strings.Contains(stderr, "not_supported") {
			t.Errorf("httpkv snapshot save of /httpkv/ = %v, stderr %q; want it refused with not_supported", err, stderr)
		}
		if entries, _ := os.ReadDir(filepath.Dir(file)); len(entries) != 0 {
			t.Errorf("httpkv snapshot save of /httpkv/ left %v", entries)
		}
	})

	t.Run("cluster maintenance", func(t *testing.T) {
		// Compaction, defragmentation and alarms are the whole
		// cluster's: no deployment without --etcd-cluster-maintenance
		// runs them, and the others' history is intact.
		var st client.Status
		open.do(t, none, http.StatusOK, "GET", "/v1/status", "").Decode(t, &st)
		for _, at := range []attacker{{open, none}, {third, third.root}} {
			for _, req := range []struct{ method, path, body string }{
				{"POST", "/v1/compact", fmt.Sprintf(`{"revision":%d,"physical":true}`, st.Revision)},
				{"POST", "/v1/defrag", ""},
				{"DELETE", "/v1/alarms", ""},
			} {
				r := at.tn.s.Do(t, req.method, req.path, []byte(req.body), at.as.Header("Content-Type", "application/json")...)
				if e := r.WantError(t, http.StatusNotImplemented, "not_supported"); !strings.Contains(e.Message, "--etcd-cluster-maintenance") {
					t.Errorf("%s as %s on %s = %s, want it to name --etcd-cluster-maintenance", r.Req, at.as.Name, at.tn.ns, r.Body)
				}
			}
		}
		var hist client.HistoryResponse
		victim.do(t, vr, http.StatusOK, "GET", "/v1/history?key=services%2Fdb&start_revision=1", "").Decode(t, &hist)
		if len(hist.Events) != 1 || hist.CompactRevision > 1 {
			t.Errorf("/migrated/'s history of services/db after the others' compactions = %+v, want its put, nothing compacted", hist)
		}
	})

	t.Run("a revoke races a grant of its ID", func(t *testing.T) {
		// /httpkv/ revokes its lease X from 8 requests at once while
		// /migrated/ grants X again the moment it is free and puts a
		// key on it: /migrated/'s key outlives every revoke of /httpkv/'s.
		ctx := context.Background()
		vh := vr.Header("Content-Type", "application/json")
		for round := range 10 {
			id := int64(5000 + round)
			open.do(t, none, http.StatusCreated, "POST", "/v1/leases", fmt.Sprintf(`{"id":%d,"ttl":600}`, id))
			open.do(t, none, http.StatusOK, "PUT", fmt.Sprintf("/v1/kv/raced?lease=%d", id), "a")
			start := make(chan struct{})
			regranted := make(chan string, 1)
			go func() {
				<-start
				deadline := time.Now().Add(time.Minute)
				for {
					r, err := victim.s.Send(ctx, "POST", "/v1/leases", []byte(fmt.Sprintf(`{"id":%d,"ttl":600}`, id)), vh...)
					switch {
					case err != nil:
						regranted <- err.Error()
					case r.Status == http.StatusConflict && time.Now().Before(deadline):
						continue
					case r.Status != http.StatusCreated:
						regranted <- fmt.Sprintf("%s = %d %s", r.Req, r.Status, r.Body)
					default:
						r, err = victim.s.Send(ctx, "PUT", fmt.Sprintf("/v1/kv/raced?lease=%d", id), []byte("b"), vh...)
						if err != nil || r.Status != http.StatusOK {
							regranted <- fmt.Sprintf("put raced with lease %d: %v %v", id, r, err)
						}
						regranted <- ""
					}
					return
				}
			}()
			var wg sync.WaitGroup
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					r, err := open.s.Send(ctx, "DELETE", fmt.Sprintf("/v1/leases/%d", id), nil)
					if err != nil || r.Status != http.StatusOK && r.Status != http.StatusNotFound {
						t.Errorf("round %d: DELETE /v1/leases/%d on /httpkv/ = %v, %v; want 200 or 404", round, id, r, err)
					}
				}()
			}
			close(start)
			wg.Wait()
			if msg := <-regranted; msg != "" {
				t.Fatalf("round %d: /migrated/ granting %d again: %s", round, id, msg)
			}
			var got client.GetResponse
			victim.do(t, vr, http.StatusOK, "GET", "/v1/kv/raced", "").Decode(t, &got)
			if got.Kv.Lease != id {
				t.Fatalf("round %d: /migrated/'s raced after /httpkv/ revoked lease %d = %+v, want it on /migrated/'s lease %d", round, id, got.Kv, id)
			}
			open.do(t, none, http.StatusNotFound, "GET", "/v1/kv/raced", "")
			victim.do(t, vr, http.StatusOK, "DELETE", fmt.Sprintf("/v1/leases/%d", id), "")
		}
		if got := victim.state(t); !slices.Equal(got, victimState) {
			t.Errorf("/migrated/ holds %q, want %q", got, victimState)
		}
	})
}

// TestGatewaySnapshot: a gateway with no namespace has the cluster to
// itself, and saves it: `httpkv snapshot save` downloads etcd's snapshot
// and `snapshot status` reads it.
func TestGatewaySnapshot(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	s := startGateway(t, c, "")
	for i := range 10 {
		s.Put(t, fmt.Sprintf("k%d", i), "v")
	}
	file := filepath.Join(t.TempDir(), "cluster.snapshot")
	if out := e2e.MustRunHTTPKV(t, nil, "snapshot", "save", "--url", s.URL, file); !strings.Contains(out, "saved revision") {
		t.Errorf("httpkv snapshot save = %q", out)
	}
	info := e2e.SnapshotStatus(t, file)
	if b, _ := json.Marshal(info); info.Keys != 11 {
		t.Errorf("snapshot status = %s, want 11 keys: 10 and the deployment's marker", b)
	}
}

// TestOverlappingNamespaces: a gateway whose namespace lies inside
// another deployment's, or covers one, does not start, and names the
// other; the deployment without a namespace covers every other. Before,
// --etcd-namespace /b/kv/ beside /b/ started healthy, and its keys
// landed among /b/'s keys and private records.
func TestOverlappingNamespaces(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	b := startGateway(t, c, "/b/")
	b.Put(t, "k", "v")
	for _, tc := range []struct{ ns, want string }{
		{"/b/kv/", `"/b/kv/" lies inside the deployment of namespace "/b/"`},
		{"/b/auth/x/", `lies inside the deployment of namespace "/b/"`},
		{"/b", `"/b" covers the deployment of namespace "/b/"`},
		{"", `covers the deployment of namespace "/b/"`},
	} {
		_, stderr, err := e2e.RunHTTPKV(t, nil, "--listen", "127.0.0.1:0", "--backend", "etcd",
			"--etcd-endpoints", strings.Join(c.Endpoints(), ","), "--etcd-namespace", tc.ns)
		if err == nil || !strings.Contains(stderr, tc.want) {
			t.Errorf("a gateway of %q beside /b/ = %v, stderr %q; want it refused, saying %q", tc.ns, err, stderr, tc.want)
		}
	}
	raw, err := c.Client(t).Get(context.Background(), "", clientv3.WithFromKey(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range raw.Kvs {
		if k := string(p.Key); strings.HasPrefix(k, "/b/kv/") && k != "/b/kv/k" || !strings.HasPrefix(k, "/b/") {
			t.Errorf("etcd holds %q after the refused gateways: written by one of them", k)
		}
	}
}
