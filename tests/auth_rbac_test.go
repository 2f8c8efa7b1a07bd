package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// authRev returns the store's revision, read by root.
func authRev(tb testing.TB, s *e2e.Server, root e2e.AuthCaller) int64 {
	tb.Helper()
	var st client.Status
	s.Do(tb, "GET", "/v1/status", nil, root.Header()...).Ok(tb, http.StatusOK, &st)
	return st.Revision
}

// rbacFixture is a server with auth enabled and the users of the matrix:
//
//	root   the root role
//	alice  readwrite prefix app/, read prefix logs/ (two roles)
//	bob    read prefix app/, readwrite the single key cfg
//	carol  readwrite every key from m on (range_end "\0")
//	wendy  write prefix app/, no read
//	dave   no role
type rbacFixture struct {
	s       *e2e.Server
	root    e2e.AuthCaller
	callers []e2e.AuthCaller // root, the users, then callers with no valid token
}

// rbacSeed is the keys the matrix reads; they are written again, alone,
// before a cell after a write was allowed.
var rbacSeed = []struct{ key, value string }{
	{"app/a", "seed"}, {"app/b", "seed"}, {"logs/1", "seed"}, {"cfg", "seed"}, {"m1", "seed"}, {"etc", "seed"},
}

func startRBAC(t *testing.T, extraArgs ...string) *rbacFixture {
	t.Helper()
	s := e2e.StartServer(t, append([]string{e2e.AuthBcryptCost}, extraArgs...)...)
	none := e2e.AuthCaller{Name: "setup"}
	passwords := map[string]string{
		"root": "root-secret", "alice": "alice-secret", "bob": "bob-secret",
		"carol": "carol-secret", "wendy": "wendy-secret", "dave": "dave-secret",
	}
	for _, name := range []string{"root", "alice", "bob", "carol", "wendy", "dave"} {
		e2e.AuthDo(t, s, none, http.StatusCreated, "POST", "/v1/auth/users",
			fmt.Sprintf(`{"name":%q,"password":%q}`, name, passwords[name]))
	}
	roles := []struct {
		name, perm string
		users      []string
	}{
		{"root", "", []string{"root"}},
		{"app-rw", `{"key":"app/","prefix":true,"type":"readwrite"}`, []string{"alice"}},
		{"logs-r", `{"key":"logs/","prefix":true,"type":"read"}`, []string{"alice"}},
		{"app-r", `{"key":"app/","prefix":true,"type":"read"}`, []string{"bob"}},
		{"cfg-rw", `{"key":"cfg","type":"readwrite"}`, []string{"bob"}},
		{"from-m", `{"key":"m","range_end":"\u0000","type":"readwrite"}`, []string{"carol"}},
		{"app-w", `{"key":"app/","prefix":true,"type":"write"}`, []string{"wendy"}},
	}
	for _, r := range roles {
		e2e.AuthDo(t, s, none, http.StatusCreated, "POST", "/v1/auth/roles", fmt.Sprintf(`{"name":%q}`, r.name))
		if r.perm != "" {
			e2e.AuthDo(t, s, none, http.StatusOK, "POST", "/v1/auth/roles/"+r.name+"/permissions", r.perm)
		}
		for _, u := range r.users {
			e2e.AuthDo(t, s, none, http.StatusOK, "PUT", "/v1/auth/users/"+u+"/roles/"+r.name, "")
		}
	}
	e2e.AuthDo(t, s, none, http.StatusOK, "POST", "/v1/auth/enable", "")
	// Once enabled, nothing but the token and status endpoints works
	// without a token.
	e2e.WantRefused(t, s.Do(t, "GET", e2e.KeyPath("app/a"), nil), true)

	f := &rbacFixture{s: s}
	for _, name := range []string{"root", "alice", "bob", "carol", "wendy", "dave"} {
		f.callers = append(f.callers, e2e.AuthCaller{Name: name, Token: e2e.AuthLogin(t, s, name, passwords[name])})
	}
	f.root = f.callers[0]
	f.callers = append(f.callers,
		e2e.AuthCaller{Name: "anonymous"},
		e2e.AuthCaller{Name: "forged", Token: "not-a-token-the-server-issued"})
	f.seed(t)
	return f
}

func (f *rbacFixture) seed(tb testing.TB) {
	tb.Helper()
	e2e.AuthDo(tb, f.s, f.root, http.StatusOK, "DELETE", "/v1/kv?key=%00&from_key=true", "")
	var ops []string
	for _, kv := range rbacSeed {
		ops = append(ops, fmt.Sprintf(`{"put":{"key":%q,"value":%q}}`, kv.key, kv.value))
	}
	e2e.AuthDo(tb, f.s, f.root, http.StatusOK, "POST", "/v1/txn", `{"success":[`+strings.Join(ops, ",")+`]}`)
}

// grantLease grants a lease as root and attaches the keys to it.
func (f *rbacFixture) grantLease(tb testing.TB, keys ...string) int64 {
	tb.Helper()
	var l client.LeaseResponse
	e2e.AuthDo(tb, f.s, f.root, http.StatusCreated, "POST", "/v1/leases", `{"ttl":600}`).Decode(tb, &l)
	for _, k := range keys {
		f.s.Do(tb, "PUT", fmt.Sprintf("%s?lease=%d", e2e.KeyPath(k), l.Id), []byte("leased"), f.root.Header()...).Want(tb, http.StatusOK)
	}
	return l.Id
}

// rbacOp is an operation of the matrix.
type rbacOp struct {
	name string
	// allowed lists the users allowed besides root.
	allowed []string
	// status is the answer when allowed; statusOverEtcd, when set, over
	// a gateway (whose tests set --etcd-namespace).
	status, statusOverEtcd int
	// writes says an allowed run may change the keys, so the seed is
	// written again before the next cell.
	writes bool
	// prepare, if set, runs as root before each cell and gives do its
	// argument (a lease ID, a revision).
	prepare func(tb testing.TB, f *rbacFixture) string
	// do sends the request; watch, if set, is a watch query instead.
	do    func(tb testing.TB, f *rbacFixture, c e2e.AuthCaller, arg string) *e2e.Reply
	watch string
	// unchanged, if set, checks as root that a refused cell changed
	// nothing beyond the revision.
	unchanged func(tb testing.TB, f *rbacFixture, arg string)
	// undo, if set, reverts what an allowed cell changed outside the keys.
	undo func(tb testing.TB, f *rbacFixture, arg string)
	// notRoot skips root's cell: it would end the fixture (auth disable).
	notRoot bool
}

// rbacSend is a request of the matrix.
func rbacSend(method, path, body string, header ...string) func(testing.TB, *rbacFixture, e2e.AuthCaller, string) *e2e.Reply {
	return func(tb testing.TB, f *rbacFixture, c e2e.AuthCaller, _ string) *e2e.Reply {
		var b []byte
		if body != "" {
			b = []byte(body)
		}
		return f.s.Do(tb, method, path, b, c.Header(header...)...)
	}
}

// rbacSendArg is rbacSend with the prepared argument put in place of %s in the
// path and the body.
func rbacSendArg(method, path, body string) func(testing.TB, *rbacFixture, e2e.AuthCaller, string) *e2e.Reply {
	return func(tb testing.TB, f *rbacFixture, c e2e.AuthCaller, arg string) *e2e.Reply {
		var b []byte
		if body != "" {
			b = []byte(strings.ReplaceAll(body, "%s", arg))
		}
		return f.s.Do(tb, method, strings.ReplaceAll(path, "%s", arg), b, c.Header("Content-Type", "application/json")...)
	}
}

// rbacLeaseWith prepares a cell with a lease granted by root, the keys
// attached to it, and gives its ID.
func rbacLeaseWith(keys ...string) func(testing.TB, *rbacFixture) string {
	return func(tb testing.TB, f *rbacFixture) string { return fmt.Sprint(f.grantLease(tb, keys...)) }
}

// rbacLeaseKept checks that a refused revoke left the lease and its keys.
func rbacLeaseKept(keys ...string) func(testing.TB, *rbacFixture, string) {
	return func(tb testing.TB, f *rbacFixture, id string) {
		tb.Helper()
		e2e.AuthDo(tb, f.s, f.root, http.StatusOK, "GET", "/v1/leases/"+id, "")
		for _, k := range keys {
			e2e.AuthDo(tb, f.s, f.root, http.StatusOK, "GET", e2e.KeyPath(k), "")
		}
	}
}

// rbacRevision prepares a cell with the store's revision.
func rbacRevision(tb testing.TB, f *rbacFixture) string { return fmt.Sprint(authRev(tb, f.s, f.root)) }

// rbacLeaseList prepares a cell with the leases as they are; with
// rbacLeasesKept, a refused put with ttl must leave them so.
func rbacLeaseList(tb testing.TB, f *rbacFixture) string {
	tb.Helper()
	return string(e2e.AuthDo(tb, f.s, f.root, http.StatusOK, "GET", "/v1/leases", "").Body)
}

func rbacLeasesKept(tb testing.TB, f *rbacFixture, before string) {
	tb.Helper()
	if after := rbacLeaseList(tb, f); after != before {
		tb.Fatalf("a refused put with ttl changed the leases: %s, were %s", after, before)
	}
}

// rbacLeasesRevoked undoes an allowed put with ttl: it revokes the leases
// granted since rbacLeaseList gave before. Left to expire, they would end
// during a later cell, and over etcd the expiry deletes each one's record
// (lease_records.go) at a revision of its own: the revision would move
// under a refused cell that wrote nothing.
func rbacLeasesRevoked(tb testing.TB, f *rbacFixture, before string) {
	tb.Helper()
	ids := func(body string) []int64 {
		var l client.LeaseList
		if err := json.Unmarshal([]byte(body), &l); err != nil || l.More {
			tb.Fatalf("GET /v1/leases = %s: %v, want every lease on one page", body, err)
		}
		var out []int64
		for _, it := range l.Leases {
			out = append(out, it.Id)
		}
		return out
	}
	old := ids(before)
	for _, id := range ids(rbacLeaseList(tb, f)) {
		if !slices.Contains(old, id) {
			e2e.AuthDo(tb, f.s, f.root, http.StatusOK, "DELETE", fmt.Sprintf("/v1/leases/%d", id), "")
		}
	}
}

var rbacEveryone = []string{"alice", "bob", "carol", "wendy", "dave"}

// rbacOps is the matrix's operations. The users' permissions are in
// rbacFixture's comment.
var rbacOps = []rbacOp{
	// Reads of single keys and ranges.
	{name: "get app/a", allowed: []string{"alice", "bob"}, status: 200, do: rbacSend("GET", e2e.KeyPath("app/a"), "")},
	{name: "get app/a raw", allowed: []string{"alice", "bob"}, status: 200, do: rbacSend("GET", e2e.KeyPath("app/a")+"?raw=true", "")},
	{name: "get cfg", allowed: []string{"bob"}, status: 200, do: rbacSend("GET", e2e.KeyPath("cfg"), "")},
	{name: "get logs/1", allowed: []string{"alice"}, status: 200, do: rbacSend("GET", e2e.KeyPath("logs/1"), "")},
	{name: "get m1", allowed: []string{"carol"}, status: 200, do: rbacSend("GET", e2e.KeyPath("m1"), "")},
	{name: "get etc", status: 200, do: rbacSend("GET", e2e.KeyPath("etc"), "")},
	{name: "list prefix app/", allowed: []string{"alice", "bob"}, status: 200, do: rbacSend("GET", "/v1/kv?key=app/&prefix=true", "")},
	{name: "list [app/a, app/c)", allowed: []string{"alice", "bob"}, status: 200, do: rbacSend("GET", "/v1/kv?key=app/a&range_end=app/c", "")},
	{name: "list count prefix logs/", allowed: []string{"alice"}, status: 200, do: rbacSend("GET", "/v1/kv?key=logs/&prefix=true&count_only=true", "")},
	{name: "list [app/, logs0) across a gap", status: 200, do: rbacSend("GET", "/v1/kv?key=app/&range_end=logs0", "")},
	{name: "list from m", allowed: []string{"carol"}, status: 200, do: rbacSend("GET", "/v1/kv?key=m&from_key=true", "")},
	{name: "list from l", status: 200, do: rbacSend("GET", "/v1/kv?key=l&from_key=true", "")},
	{name: "list every key", status: 200, do: rbacSend("GET", "/v1/kv", "")},

	// History: the whole range is checked, as for a read of it.
	{name: "history app/a", allowed: []string{"alice", "bob"}, status: 200, do: rbacSend("GET", "/v1/history?key=app/a", "")},
	{name: "history prefix app/ descending", allowed: []string{"alice", "bob"}, status: 200, do: rbacSend("GET", "/v1/history?key=app/&prefix=true&order=descend&prev_kv=true", "")},
	{name: "history prefix logs/", allowed: []string{"alice"}, status: 200, do: rbacSend("GET", "/v1/history?key=logs/&prefix=true", "")},
	{name: "history cfg", allowed: []string{"bob"}, status: 200, do: rbacSend("GET", "/v1/history?key=cfg", "")},
	{name: "history from m", allowed: []string{"carol"}, status: 200, do: rbacSend("GET", "/v1/history?key=m&from_key=true", "")},
	{name: "history [app/, logs0) across a gap", status: 200, do: rbacSend("GET", "/v1/history?key=app/&range_end=logs0", "")},
	{name: "history every key", status: 200, do: rbacSend("GET", "/v1/history", "")},

	// Writes.
	{name: "put app/x", allowed: []string{"alice", "wendy"}, status: 200, writes: true, do: rbacSend("PUT", e2e.KeyPath("app/x"), "v")},
	{name: "put app/a prev_kv", allowed: []string{"alice"}, status: 200, writes: true, do: rbacSend("PUT", e2e.KeyPath("app/a")+"?prev_kv=true", "v")},
	{name: "put app/x If-None-Match", allowed: []string{"alice"}, status: 200, writes: true, do: rbacSend("PUT", e2e.KeyPath("app/x"), "v", "If-None-Match", "*")},
	{name: "put logs/x", status: 200, writes: true, do: rbacSend("PUT", e2e.KeyPath("logs/x"), "v")},
	{name: "put cfg", allowed: []string{"bob"}, status: 200, writes: true, do: rbacSend("PUT", e2e.KeyPath("cfg"), "v")},
	{name: "put z", allowed: []string{"carol"}, status: 200, writes: true, do: rbacSend("PUT", e2e.KeyPath("z"), "v")},
	{name: "delete app/a", allowed: []string{"alice", "wendy"}, status: 200, writes: true, do: rbacSend("DELETE", e2e.KeyPath("app/a"), "")},
	{name: "delete app/a prev_kv", allowed: []string{"alice"}, status: 200, writes: true, do: rbacSend("DELETE", e2e.KeyPath("app/a")+"?prev_kv=true", "")},
	{name: "delete prefix app/", allowed: []string{"alice", "wendy"}, status: 200, writes: true, do: rbacSend("DELETE", "/v1/kv?key=app/&prefix=true", "")},
	{name: "delete [app/, logs0)", status: 200, writes: true, do: rbacSend("DELETE", "/v1/kv?key=app/&range_end=logs0", "")},
	{name: "delete from m", allowed: []string{"carol"}, status: 200, writes: true, do: rbacSend("DELETE", "/v1/kv?key=m&from_key=true", "")},
	{name: "delete every key", status: 200, writes: true, do: rbacSend("DELETE", "/v1/kv?key=%00&from_key=true", "")},

	// Txns: every compare and every branch, nested ones too, whichever
	// runs.
	{name: "txn compare app/a then put app/a", allowed: []string{"alice"}, status: 200, writes: true,
		do: rbacSend("POST", "/v1/txn", `{"compare":[{"key":"app/a","target":"value","result":"equal","value":"seed"}],"success":[{"put":{"key":"app/a","value":"v"}}]}`)},
	{name: "txn range prefix app/", allowed: []string{"alice", "bob"}, status: 200,
		do: rbacSend("POST", "/v1/txn", `{"success":[{"range":{"key":"app/","prefix":true}}]}`)},
	{name: "txn compare prefix app/", allowed: []string{"alice", "bob"}, status: 200,
		do: rbacSend("POST", "/v1/txn", `{"compare":[{"key":"app/","prefix":true,"target":"version","result":"greater","version":0}]}`)},
	{name: "txn compare etc alone", status: 200,
		do: rbacSend("POST", "/v1/txn", `{"compare":[{"key":"etc","target":"version","result":"greater","version":0}]}`)},
	{name: "txn nested put etc", status: 200, writes: true,
		do: rbacSend("POST", "/v1/txn", `{"success":[{"txn":{"success":[{"put":{"key":"etc","value":"v"}}]}}]}`)},
	{name: "txn nested failure branch put etc", status: 200, writes: true,
		do: rbacSend("POST", "/v1/txn", `{"success":[{"put":{"key":"app/x","value":"v"}},{"txn":{"failure":[{"put":{"key":"etc","value":"v"}}]}}]}`)},
	{name: "txn nested app/ ops", allowed: []string{"alice"}, status: 200, writes: true,
		do: rbacSend("POST", "/v1/txn", `{"compare":[{"key":"app/a","target":"version","result":"greater","version":0}],`+
			`"success":[{"put":{"key":"app/y","value":"v"}},{"txn":{"compare":[{"key":"app/b","target":"mod","result":"greater","mod_revision":0}],`+
			`"success":[{"delete":{"key":"app/b"}}],"failure":[{"range":{"key":"app/","prefix":true}}]}}]}`)},
	{name: "txn unrun failure branch writes logs/", status: 200, writes: true,
		do: rbacSend("POST", "/v1/txn", `{"compare":[{"key":"app/a","target":"value","result":"equal","value":"seed"}],`+
			`"success":[{"put":{"key":"app/x","value":"v"}}],"failure":[{"put":{"key":"logs/x","value":"v"}}]}`)},
	{name: "txn put app/x prev_kv", allowed: []string{"alice"}, status: 200, writes: true,
		do: rbacSend("POST", "/v1/txn", `{"success":[{"put":{"key":"app/x","value":"v","prev_kv":true}}]}`)},

	// A put with ttl is a put; a patch reads and writes its key; an
	// export reads its range, an import writes its scope (and reads it,
	// for a dry run), a restore reads and writes its range.
	{name: "put app/x ttl", allowed: []string{"alice", "wendy"}, status: 200, writes: true,
		prepare: rbacLeaseList, do: rbacSend("PUT", e2e.KeyPath("app/x")+"?ttl=60", "v"), undo: rbacLeasesRevoked, unchanged: rbacLeasesKept},
	{name: "put app/x ttl If-None-Match", allowed: []string{"alice"}, status: 200, writes: true,
		prepare: rbacLeaseList, do: rbacSend("PUT", e2e.KeyPath("app/x")+"?ttl=60", "v", "If-None-Match", "*"), undo: rbacLeasesRevoked, unchanged: rbacLeasesKept},
	{name: "put etc ttl", status: 200, writes: true,
		prepare: rbacLeaseList, do: rbacSend("PUT", e2e.KeyPath("etc")+"?ttl=60", "v"), undo: rbacLeasesRevoked, unchanged: rbacLeasesKept},
	{name: "patch app/p", allowed: []string{"alice"}, status: 200, writes: true,
		do: rbacSend("PATCH", e2e.KeyPath("app/p"), `{"a":1}`, "Content-Type", "application/merge-patch+json")},
	{name: "patch cfg", allowed: []string{"bob"}, status: 409,
		do: rbacSend("PATCH", e2e.KeyPath("cfg"), `{"a":1}`, "Content-Type", "application/merge-patch+json")},
	{name: "export prefix app/", allowed: []string{"alice", "bob"}, status: 200, do: rbacSend("GET", "/v1/export?key=app/&prefix=true", "")},
	{name: "export prefix logs/", allowed: []string{"alice"}, status: 200, do: rbacSend("GET", "/v1/export?key=logs/&prefix=true", "")},
	{name: "export from m", allowed: []string{"carol"}, status: 200, do: rbacSend("GET", "/v1/export?key=m&from_key=true", "")},
	{name: "export every key", status: 200, do: rbacSend("GET", "/v1/export", "")},
	{name: "import prefix app/", allowed: []string{"alice", "wendy"}, status: 200, writes: true,
		do: rbacSend("POST", "/v1/import?key=app/&prefix=true", `{"key":"app/x","value":"v"}`)},
	{name: "import prefix app/ dry run", allowed: []string{"alice"}, status: 200,
		do: rbacSend("POST", "/v1/import?key=app/&prefix=true&dry_run=true", `{"key":"app/x","value":"v"}`)},
	{name: "import cfg", allowed: []string{"bob"}, status: 200, writes: true,
		do: rbacSend("POST", "/v1/import?key=cfg", `{"key":"cfg","value":"v"}`)},
	{name: "import every key", status: 200, writes: true, do: rbacSend("POST", "/v1/import", `{"key":"app/x","value":"v"}`)},
	{name: "restore prefix app/", allowed: []string{"alice"}, status: 200, writes: true, prepare: rbacRevision,
		do: rbacSendArg("POST", "/v1/restore", `{"key":"app/","prefix":true,"revision":%s}`)},
	{name: "restore prefix app/ dry run", allowed: []string{"alice"}, status: 200, prepare: rbacRevision,
		do: rbacSendArg("POST", "/v1/restore", `{"key":"app/","prefix":true,"revision":%s,"dry_run":true}`)},
	{name: "restore cfg", allowed: []string{"bob"}, status: 200, writes: true, prepare: rbacRevision,
		do: rbacSendArg("POST", "/v1/restore", `{"key":"cfg","revision":%s}`)},
	{name: "restore every key", status: 200, writes: true, prepare: rbacRevision,
		do: rbacSendArg("POST", "/v1/restore", `{"key":"\u0000","from_key":true,"revision":%s}`)},

	// Watches: the whole range is checked, and "\0" means every key from
	// key on, not the key.
	{name: "watch app/a", allowed: []string{"alice", "bob"}, watch: "key=app/a"},
	{name: "watch prefix app/", allowed: []string{"alice", "bob"}, watch: "key=app/&prefix=true"},
	{name: "watch cfg", allowed: []string{"bob"}, watch: "key=cfg"},
	{name: "watch cfg range_end \\0", watch: "key=cfg&range_end=%00"},
	{name: "watch from m", allowed: []string{"carol"}, watch: "key=m&from_key=true"},
	{name: "watch m range_end \\0", allowed: []string{"carol"}, watch: "key=m&range_end=%00"},
	{name: "watch from l", watch: "key=l&from_key=true"},
	{name: "watch every key", watch: ""},
	{name: "watch prefix logs/ with prev_kv", allowed: []string{"alice"}, watch: "key=logs/&prefix=true&prev_kv=true"},

	// Leases: granting, listing and keeping alive need a token only; a
	// revoke needs write on every key attached.
	{name: "lease grant", allowed: rbacEveryone, status: 201, do: rbacSendArg("POST", "/v1/leases", `{"ttl":600}`)},
	{name: "lease list", allowed: rbacEveryone, status: 200, do: rbacSend("GET", "/v1/leases", "")},
	{name: "lease keepalive", allowed: rbacEveryone, status: 200, prepare: rbacLeaseWith(), do: rbacSendArg("POST", "/v1/leases/%s/keepalive", "")},
	{name: "lease time-to-live", allowed: rbacEveryone, status: 200, prepare: rbacLeaseWith("app/l", "etc"), do: rbacSendArg("GET", "/v1/leases/%s?keys=true", "")},
	{name: "lease attach app/l", allowed: []string{"alice", "wendy"}, status: 200, writes: true, prepare: rbacLeaseWith(),
		do: rbacSendArg("PUT", "/v1/kv/app%2Fl?lease=%s", "v")},
	{name: "lease attach etc", status: 200, writes: true, prepare: rbacLeaseWith(),
		do: rbacSendArg("PUT", "/v1/kv/etc?lease=%s", "v")},
	{name: "lease revoke with app/l", allowed: []string{"alice", "wendy"}, status: 200, writes: true,
		prepare: rbacLeaseWith("app/l"), do: rbacSendArg("DELETE", "/v1/leases/%s", ""), unchanged: rbacLeaseKept("app/l")},
	{name: "lease revoke with app/l and logs/l", status: 200, writes: true,
		prepare: rbacLeaseWith("app/l", "logs/l"), do: rbacSendArg("DELETE", "/v1/leases/%s", ""), unchanged: rbacLeaseKept("app/l", "logs/l")},
	{name: "lease revoke without keys", allowed: rbacEveryone, status: 200, writes: true,
		prepare: rbacLeaseWith(), do: rbacSendArg("DELETE", "/v1/leases/%s", ""), unchanged: rbacLeaseKept()},

	// Locks and elections: write on name/ to lock, release, campaign,
	// proclaim and resign; read on it for the leader and observe.
	{name: "lock app/lk", allowed: []string{"alice", "wendy"}, status: 200, writes: true, prepare: rbacLeaseWith(),
		do: rbacSendArg("POST", "/v1/locks/app%2Flk?timeout=0s", `{"lease":%s}`)},
	{name: "lock app/lk with a lease holding app/l", allowed: []string{"alice", "wendy"}, status: 200, writes: true,
		prepare: rbacLeaseWith("app/l"), do: rbacSendArg("POST", "/v1/locks/app%2Flk?timeout=0s", `{"lease":%s}`)},
	{name: "lock app/lk with a lease holding etc", status: 200, writes: true, prepare: rbacLeaseWith("etc"),
		do: rbacSendArg("POST", "/v1/locks/app%2Flk?timeout=0s", `{"lease":%s}`)},
	{name: "lock logs/lk", status: 200, writes: true, prepare: rbacLeaseWith(),
		do: rbacSendArg("POST", "/v1/locks/logs%2Flk?timeout=0s", `{"lease":%s}`)},
	{name: "unlock app/lk", allowed: []string{"alice", "wendy"}, status: 200, writes: true, prepare: rbacLocked("app/lk"),
		do: rbacSendArg("DELETE", "/v1/locks/app%2Flk?key=%s", ""), unchanged: rbacKeyKept},
	{name: "campaign app/el", allowed: []string{"alice", "wendy"}, status: 200, writes: true, prepare: rbacLeaseWith(),
		do: rbacSendArg("POST", "/v1/elections/app%2Fel/campaign?timeout=0s", `{"lease":%s,"value":"v"}`)},
	{name: "proclaim app/el", allowed: []string{"alice", "wendy"}, status: 200, writes: true, prepare: rbacCandidate("app/el"),
		do: rbacSendArg("POST", "/v1/elections/app%2Fel/proclaim", `{"leader":%s,"value":"v"}`)},
	{name: "resign app/el", allowed: []string{"alice", "wendy"}, status: 200, writes: true, prepare: rbacCandidate("app/el"),
		do: rbacSendArg("POST", "/v1/elections/app%2Fel/resign", `{"leader":%s}`)},
	{name: "leader app/el", allowed: []string{"alice", "bob"}, status: 200, prepare: rbacCandidate("app/el"),
		do: rbacSendArg("GET", "/v1/elections/app%2Fel/leader", "")},
	{name: "leader logs/el", allowed: []string{"alice"}, status: 404, do: rbacSend("GET", "/v1/elections/logs%2Fel/leader", "")},
	{name: "observe app/el", allowed: []string{"alice", "bob"}, status: 200, do: rbacObserve("app/el")},
	{name: "observe cfg", allowed: []string{}, status: 200, do: rbacObserve("cfg")},

	// Maintenance is root's.
	{name: "compact", status: 200, writes: true,
		prepare: func(tb testing.TB, f *rbacFixture) string { return fmt.Sprint(authRev(tb, f.s, f.root)) },
		do:      rbacSendArg("POST", "/v1/compact", `{"revision":%s}`),
		unchanged: func(tb testing.TB, f *rbacFixture, _ string) {
			tb.Helper()
			var st client.Status
			f.s.Do(tb, "GET", "/v1/status", nil, f.root.Header()...).Ok(tb, http.StatusOK, &st)
			// The revision compacted to is the current one, which only a
			// successful compaction reaches.
			if st.CompactRevision == st.Revision {
				tb.Fatalf("a refused compaction compacted: status %+v", st)
			}
		}},
	{name: "defrag", status: 200, do: rbacSend("POST", "/v1/defrag", "")},
	{name: "status", status: 200, do: rbacSend("GET", "/v1/status", "")},
	{name: "alarms", status: 200, do: rbacSend("GET", "/v1/alarms", "")},
	{name: "disarm alarms", status: 200, do: rbacSend("DELETE", "/v1/alarms", "")},
	// A namespace's gateway takes no snapshot of the whole cluster.
	{name: "snapshot", status: 200, statusOverEtcd: 501, do: rbacSend("GET", "/v1/snapshot", "")},

	// Auth administration is root's; status and token need no token.
	{name: "auth status", allowed: append([]string{"anonymous", "forged"}, rbacEveryone...), status: 200, do: rbacSend("GET", "/v1/auth/status", "")},
	{name: "auth list users", status: 200, do: rbacSend("GET", "/v1/auth/users", "")},
	{name: "auth get user", status: 200, do: rbacSend("GET", "/v1/auth/users/alice", "")},
	{name: "auth list roles", status: 200, do: rbacSend("GET", "/v1/auth/roles", "")},
	{name: "auth get role", status: 200, do: rbacSend("GET", "/v1/auth/roles/app-rw", "")},
	{name: "auth add user", status: 201, do: rbacSend("POST", "/v1/auth/users", `{"name":"eve","password":"eve-secret"}`),
		unchanged: func(tb testing.TB, f *rbacFixture, _ string) {
			e2e.AuthDo(tb, f.s, f.root, http.StatusNotFound, "GET", "/v1/auth/users/eve", "")
		},
		undo: func(tb testing.TB, f *rbacFixture, _ string) {
			e2e.AuthDo(tb, f.s, f.root, http.StatusOK, "DELETE", "/v1/auth/users/eve", "")
		}},
	{name: "auth grant role to self", status: 200, do: rbacSend("PUT", "/v1/auth/users/dave/roles/app-rw", ""),
		unchanged: func(tb testing.TB, f *rbacFixture, _ string) {
			var u struct{ Roles []string }
			e2e.AuthDo(tb, f.s, f.root, http.StatusOK, "GET", "/v1/auth/users/dave", "").Decode(tb, &u)
			if len(u.Roles) != 0 {
				tb.Fatalf("dave has roles %q after refused grants", u.Roles)
			}
		},
		undo: func(tb testing.TB, f *rbacFixture, _ string) {
			e2e.AuthDo(tb, f.s, f.root, http.StatusOK, "DELETE", "/v1/auth/users/dave/roles/app-rw", "")
		}},
	{name: "auth grant permission", status: 200, do: rbacSend("POST", "/v1/auth/roles/app-w/permissions", `{"key":"etc","type":"readwrite"}`),
		unchanged: func(tb testing.TB, f *rbacFixture, _ string) {
			e2e.AuthDo(tb, f.s, f.root, http.StatusNotFound, "DELETE", "/v1/auth/roles/app-w/permissions?key=etc", "")
		},
		undo: func(tb testing.TB, f *rbacFixture, _ string) {
			e2e.AuthDo(tb, f.s, f.root, http.StatusOK, "DELETE", "/v1/auth/roles/app-w/permissions?key=etc", "")
		}},
	{name: "auth delete user", status: 200, notRoot: true, do: rbacSend("DELETE", "/v1/auth/users/dave", ""),
		unchanged: func(tb testing.TB, f *rbacFixture, _ string) {
			e2e.AuthDo(tb, f.s, f.root, http.StatusOK, "GET", "/v1/auth/users/dave", "")
		}},
	{name: "auth change password", status: 200, notRoot: true, do: rbacSend("PUT", "/v1/auth/users/alice/password", `{"password":"x"}`)},
	{name: "auth disable", status: 200, notRoot: true, do: rbacSend("POST", "/v1/auth/disable", ""),
		unchanged: func(tb testing.TB, f *rbacFixture, _ string) {
			var st struct{ Enabled bool }
			e2e.AuthDo(tb, f.s, f.root, http.StatusOK, "GET", "/v1/auth/status", "").Decode(tb, &st)
			if !st.Enabled {
				tb.Fatal("auth is disabled after a refused disable")
			}
		}},
}

// TestAuthRBACMatrix runs every operation as every caller: root, users
// of several roles, a user with none, no token and a forged one. An
// allowed cell answers its status; any other answers 401 (no valid token)
// or 403 and moves no revision, nor anything else the cell could change.
func TestAuthRBACMatrix(t *testing.T) {
	t.Parallel()
	f := startRBAC(t)
	dirty := false
	for _, op := range rbacOps {
		for _, c := range f.callers {
			if op.notRoot && c.Name == "root" {
				continue
			}
			allowed := c.Name == "root" || slices.Contains(op.allowed, c.Name)
			noToken := c.Name == "anonymous" || c.Name == "forged"
			t.Run(op.name+"/"+c.Name, func(t *testing.T) {
				if dirty {
					f.seed(t)
					dirty = false
				}
				var arg string
				if op.prepare != nil {
					arg = op.prepare(t, f)
				}
				before := authRev(t, f.s, f.root)
				var r *e2e.Reply
				if op.do == nil {
					r = rbacWatch(t, f, c, op.watch, allowed)
				} else {
					r = op.do(t, f, c, arg)
				}
				if allowed {
					status := op.status
					if op.statusOverEtcd != 0 && e2e.OnEtcd(t) {
						status = op.statusOverEtcd
					}
					if op.do == nil {
						status = http.StatusOK // a watch streams
					}
					r.Want(t, status)
					dirty = dirty || op.writes
					if op.undo != nil {
						op.undo(t, f, arg)
					}
					return
				}
				e2e.WantRefused(t, r, noToken)
				if after := authRev(t, f.s, f.root); after != before {
					t.Errorf("%s refused, yet the revision moved from %d to %d", r.Req, before, after)
				}
				if op.unchanged != nil {
					op.unchanged(t, f, arg)
				}
			})
		}
	}
}

// rbacWatch opens a watch as c. An allowed one must stream (and is closed
// once created); a refused one must answer at once.
func rbacWatch(tb testing.TB, f *rbacFixture, c e2e.AuthCaller, query string, allowed bool) *e2e.Reply {
	tb.Helper()
	if allowed {
		w := e2e.OpenWatch(tb, f.s, query, c.Header()...)
		w.Close()
		return &e2e.Reply{Req: "GET /v1/watch?" + query, Status: http.StatusOK}
	}
	ctx, cancel := context.WithTimeout(context.Background(), e2e.WatchTimeout)
	defer cancel()
	r, err := f.s.Send(ctx, "GET", "/v1/watch?"+query, nil, c.Header()...)
	if err != nil {
		tb.Fatalf("GET /v1/watch?%s as %s: %v (a stream, want a refusal)", query, c.Name, err)
	}
	e2e.CheckReply(tb, r)
	return r
}

// TestAuthRBACDetails covers what a status cannot show: lease
// time-to-live lists only the keys the caller may read, a txn refused for
// a nested op writes none of its others, the token in the access_token
// query, and a watch stream ending when its permission is taken away.
func TestAuthRBACDetails(t *testing.T) {
	t.Parallel()
	f := startRBAC(t)
	caller := func(name string) e2e.AuthCaller {
		for _, c := range f.callers {
			if c.Name == name {
				return c
			}
		}
		t.Fatalf("no caller %s", name)
		return e2e.AuthCaller{}
	}

	t.Run("lease time-to-live hides unreadable keys, and says so", func(t *testing.T) {
		id := f.grantLease(t, "app/l", "logs/l", "m/l", "etc/l", "cfg")
		want := map[string][]string{
			"root":  {"app/l", "cfg", "etc/l", "logs/l", "m/l"},
			"alice": {"app/l", "logs/l"},
			"bob":   {"app/l", "cfg"},
			"carol": {"m/l"},
			"wendy": {},
			"dave":  {},
		}
		for name, keys := range want {
			var res client.LeaseTimeToLive
			f.s.Do(t, "GET", fmt.Sprintf("/v1/leases/%d?keys=true", id), nil, caller(name).Header()...).Ok(t, http.StatusOK, &res)
			got := slices.Sorted(slices.Values(e2e.Deref(res.Keys)))
			if !slices.Equal(got, keys) || len(e2e.Deref(res.KeysBase64)) != 0 {
				t.Errorf("lease %d keys as %s = %q %q, want %q", id, name, res.Keys, res.KeysBase64, keys)
			}
			// Who may not read them all is told some were left out.
			if hidden := len(keys) < 5; e2e.Deref(res.KeysHidden) != hidden {
				t.Errorf("lease %d keys as %s: keys_hidden %v, want %v", id, name, res.KeysHidden, hidden)
			}
		}
	})

	t.Run("nested refusal writes nothing", func(t *testing.T) {
		alice := caller("alice")
		before := authRev(t, f.s, f.root)
		r := f.s.Do(t, "POST", "/v1/txn", []byte(`{"success":[{"put":{"key":"app/n","value":"v"}},`+
			`{"txn":{"success":[{"txn":{"success":[{"delete":{"key":"etc"}}]}}]}}]}`), alice.Header()...)
		e2e.WantRefused(t, r, false)
		e2e.AuthDo(t, f.s, f.root, http.StatusNotFound, "GET", e2e.KeyPath("app/n"), "")
		e2e.AuthDo(t, f.s, f.root, http.StatusOK, "GET", e2e.KeyPath("etc"), "")
		if after := authRev(t, f.s, f.root); after != before {
			t.Errorf("revision moved from %d to %d", before, after)
		}
	})

	t.Run("access_token query", func(t *testing.T) {
		// A watch, which a browser opens with EventSource, takes the token
		// in the query.
		alice := caller("alice")
		q := "access_token=" + url.QueryEscape(alice.Token)
		rbacWatch(t, f, e2e.AuthCaller{Name: "alice in the query"}, "key=app/&prefix=true&"+q, true)
		e2e.WantRefused(t, rbacWatch(t, f, e2e.AuthCaller{Name: "alice in the query"}, "key=etc&"+q, false), false)
		e2e.WantRefused(t, rbacWatch(t, f, e2e.AuthCaller{Name: "a bad query token"}, "key=app/&prefix=true&access_token=nope", false), true)
		// The header, when given, is the token: the query does not
		// override a bad one.
		e2e.WantRefused(t, rbacWatch(t, f, e2e.AuthCaller{Name: "a bad header", Token: "nope"}, "key=app/&prefix=true&"+q, false), true)
		// Nothing else does: a URL ends up in logs and histories.
		for _, path := range []string{e2e.KeyPath("app/a") + "?" + q, "/v1/kv?key=app/&prefix=true&" + q} {
			r := f.s.Do(t, "GET", path, nil)
			e2e.WantRefused(t, r, true)
			if e := r.WantError(t, http.StatusUnauthorized, "unauthenticated"); !strings.Contains(e.Message, "access_token") {
				t.Errorf("%s: message %q does not say where access_token is accepted", r.Req, e.Message)
			}
		}
		r := f.s.Do(t, "PUT", e2e.KeyPath("app/a")+"?"+q, []byte("v"))
		e2e.WantRefused(t, r, true)
	})

	t.Run("watch canceled when permission revoked", func(t *testing.T) {
		carol := caller("carol")
		w := e2e.OpenWatch(t, f.s, "key=m&from_key=true", carol.Header()...)
		// A change that leaves the stream allowed does not end it.
		e2e.AuthDo(t, f.s, f.root, http.StatusCreated, "POST", "/v1/auth/roles", `{"name":"unrelated"}`)
		rev := f.s.Do(t, "PUT", e2e.KeyPath("m2"), []byte("v"), f.root.Header()...).Want(t, http.StatusOK).Revision(t)
		if m := w.NextData(e2e.WatchTimeout); m.ID != rev || len(m.Events) != 1 || e2e.KeyOf(&m.Events[0].Kv) != "m2" {
			t.Fatalf("watch got %v, want the put of m2 at %d", m.Raw, rev)
		}
		e2e.AuthDo(t, f.s, f.root, http.StatusOK, "DELETE", "/v1/auth/roles/from-m/permissions?key=m&range_end=%00", "")
		m := w.Next(e2e.WatchTimeout)
		if m.Kind != "canceled" || !strings.Contains(m.Reason, "permission") {
			t.Fatalf("watch got %v after its permission was revoked, want event: canceled", m.Raw)
		}
		w.WantEnd(e2e.WatchTimeout)
		// And a new watch is refused.
		e2e.WantRefused(t, rbacWatch(t, f, carol, "key=m&from_key=true", false), false)
	})
}

// TestAuthTokenExpiry uses a server whose tokens live a second: a token
// works, then, polled, answers 401 with WWW-Authenticate: Bearer once it
// has expired, while a new one works again.
func TestAuthTokenExpiry(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t, e2e.AuthBcryptCost, "--auth-token-ttl=1s")
	e2e.EnableAuth(t, s, "pw")

	var tok client.Token
	// Taken before the request: the token cannot be older than this.
	asked := time.Now()
	s.Do(t, "POST", "/v1/auth/token", []byte(`{"name":"root","password":"pw"}`)).Ok(t, http.StatusOK, &tok)
	if tok.Ttl != 1 {
		t.Errorf("token ttl = %d, want 1 (--auth-token-ttl=1s)", tok.Ttl)
	}
	root := e2e.AuthCaller{Name: "root", Token: tok.Token}
	s.Do(t, "PUT", e2e.KeyPath("k"), []byte("v"), root.Header()...).Want(t, http.StatusOK)
	var expired *e2e.Reply
	e2e.Eventually(t, 15*time.Second, func() (bool, string) {
		expired = s.Do(t, "GET", e2e.KeyPath("k"), nil, root.Header()...)
		return expired.Status != http.StatusOK, fmt.Sprintf("GET with a 1s token still answers %d", expired.Status)
	})
	e2e.WantRefused(t, expired, true)
	// The two processes read the clock apart; allow them a little skew.
	if age := time.Since(asked); age < 900*time.Millisecond {
		t.Errorf("the token expired within %v of being asked for, want 1s", age)
	}
	root.Token = e2e.AuthLogin(t, s, "root", "pw")
	s.Do(t, "GET", e2e.KeyPath("k"), nil, root.Header()...).Want(t, http.StatusOK)
}

// TestAuthTokenLifecycle covers what ends a token besides expiry
// (password change, user deletion, a restart), what a restart keeps
// (users, roles, permissions, the enabled flag), the rate limit on failed
// token requests, and that no token or password reaches the server's log.
func TestAuthTokenLifecycle(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t, e2e.AuthBcryptCost, "--log-level=debug")
	secrets := []string{"root-pw-1f2e", "alice-pw-3d4c", "alice-pw-new-5b6a", "bob-pw-7988", "wrong-pw-a7b6"}
	none := e2e.AuthCaller{}
	for _, u := range [][2]string{{"root", secrets[0]}, {"alice", secrets[1]}, {"bob", secrets[3]}} {
		e2e.AuthDo(t, s, none, http.StatusCreated, "POST", "/v1/auth/users", fmt.Sprintf(`{"name":%q,"password":%q}`, u[0], u[1]))
	}
	e2e.AuthDo(t, s, none, http.StatusCreated, "POST", "/v1/auth/roles", `{"name":"app"}`)
	e2e.AuthDo(t, s, none, http.StatusOK, "POST", "/v1/auth/roles/app/permissions", `{"key":"app/","prefix":true,"type":"readwrite"}`)
	for _, g := range [][2]string{{"root", "root"}, {"alice", "app"}, {"bob", "app"}} {
		e2e.AuthDo(t, s, none, http.StatusOK, "PUT", "/v1/auth/users/"+g[0]+"/roles/"+g[1], "")
	}
	e2e.AuthDo(t, s, none, http.StatusOK, "POST", "/v1/auth/enable", "")
	var tokens []string
	login := func(name, password string) e2e.AuthCaller {
		t.Helper()
		c := e2e.AuthCaller{Name: name, Token: e2e.AuthLogin(t, s, name, password)}
		tokens = append(tokens, c.Token)
		return c
	}
	works := func(c e2e.AuthCaller) {
		t.Helper()
		s.Do(t, "PUT", e2e.KeyPath("app/"+c.Name), []byte("v"), c.Header()...).Want(t, http.StatusOK)
	}
	ended := func(c e2e.AuthCaller, why string) {
		t.Helper()
		r := s.Do(t, "GET", e2e.KeyPath("app/x"), nil, c.Header()...)
		if r.Status != http.StatusUnauthorized {
			t.Fatalf("%s: %s with %s's token = %d %s, want 401", why, r.Req, c.Name, r.Status, r.Body)
		}
		e2e.WantRefused(t, r, true)
	}
	badLogin := func(name, password string, status int, code string) {
		t.Helper()
		body := fmt.Sprintf(`{"name":%q,"password":%q}`, name, password)
		s.Do(t, "POST", "/v1/auth/token", []byte(body)).WantError(t, status, code)
	}
	checkLog := func() {
		t.Helper()
		log := s.Stderr.String()
		if !strings.Contains(log, `"route"`) {
			t.Fatalf("the debug log has no request lines; it is:\n%s", log)
		}
		for _, secret := range append(slices.Clone(secrets), tokens...) {
			if strings.Contains(log, secret) {
				t.Errorf("the server's log holds the secret %q:\n%s", secret, log)
			}
			if esc := url.QueryEscape(secret); strings.Contains(log, esc) {
				t.Errorf("the server's log holds the secret %q, escaped", secret)
			}
		}
	}

	root := login("root", secrets[0])
	alice, bob := login("alice", secrets[1]), login("bob", secrets[3])
	works(alice)
	works(bob)

	// A password change ends the user's tokens, and no one else's.
	e2e.AuthDo(t, s, root, http.StatusOK, "PUT", "/v1/auth/users/alice/password", fmt.Sprintf(`{"password":%q}`, secrets[2]))
	ended(alice, "after alice's password changed")
	works(bob)
	works(root)
	badLogin("alice", secrets[1], http.StatusUnauthorized, "unauthenticated")
	alice = login("alice", secrets[2])
	works(alice)
	// The token in a watch's query is looked up like the header's, so it
	// is never logged either.
	w := e2e.OpenWatch(t, s, "key=app/alice&access_token="+url.QueryEscape(alice.Token))
	w.Close()

	// Deleting a user ends its tokens; it cannot log in again.
	e2e.AuthDo(t, s, root, http.StatusOK, "DELETE", "/v1/auth/users/bob", "")
	ended(bob, "after bob was deleted")
	badLogin("bob", secrets[3], http.StatusUnauthorized, "unauthenticated")
	works(alice)
	checkLog()

	// A restart keeps users, roles, permissions and the enabled flag;
	// tokens live in memory and end with the process. A gateway's tokens
	// are the deployment's, signed, good on every gateway: they outlive
	// the restart of one.
	s.Restart()
	var st struct{ Enabled bool }
	s.Do(t, "GET", "/v1/auth/status", nil).Ok(t, http.StatusOK, &st)
	if !st.Enabled {
		t.Fatal("auth is disabled after a restart, want it enabled as before")
	}
	if e2e.OnEtcd(t) {
		works(alice)
	} else {
		ended(root, "after a restart")
		ended(alice, "after a restart")
	}
	root = login("root", secrets[0])
	var users struct{ Users []string }
	e2e.AuthDo(t, s, root, http.StatusOK, "GET", "/v1/auth/users", "").Decode(t, &users)
	if !slices.Equal(users.Users, []string{"alice", "root"}) {
		t.Errorf("users after a restart = %q, want [alice root]", users.Users)
	}
	var role client.Role
	e2e.AuthDo(t, s, root, http.StatusOK, "GET", "/v1/auth/roles/app", "").Decode(t, &role)
	if len(role.Permissions) != 1 || e2e.Deref(role.Permissions[0].Key) != "app/" || e2e.Deref(role.Permissions[0].RangeEnd) != "app0" || role.Permissions[0].Type != "readwrite" {
		t.Errorf("role app after a restart = %+v, want readwrite [app/, app0)", role)
	}
	badLogin("alice", secrets[1], http.StatusUnauthorized, "unauthenticated")
	alice = login("alice", secrets[2])
	works(alice)
	e2e.WantRefused(t, s.Do(t, "GET", e2e.KeyPath("etc"), nil, alice.Header()...), false)

	// Failed token requests are limited: a burst of five (one of which
	// was the old password above), then 429 even for the right password,
	// until the limit refills (one every 2 seconds, so a slow run may see
	// an extra failure or two pass before the first 429).
	failures := 1
	for {
		body := fmt.Sprintf(`{"name":"alice","password":%q}`, secrets[4])
		r := s.Do(t, "POST", "/v1/auth/token", []byte(body))
		if r.Status == http.StatusTooManyRequests {
			r.WantError(t, http.StatusTooManyRequests, "too_many_requests")
			break
		}
		r.WantError(t, http.StatusUnauthorized, "unauthenticated")
		if failures++; failures > 8 {
			t.Fatalf("%d failed token requests in a row all answered 401, want 429 after 5", failures)
		}
	}
	if failures < 5 {
		t.Errorf("429 after %d failed token requests, want it after 5", failures)
	}
	badLogin("alice", secrets[2], http.StatusTooManyRequests, "too_many_requests")
	works(alice) // tokens already issued are not affected
	e2e.Eventually(t, 15*time.Second, func() (bool, string) {
		body := fmt.Sprintf(`{"name":"alice","password":%q}`, secrets[2])
		r := s.Do(t, "POST", "/v1/auth/token", []byte(body))
		if r.Status == http.StatusOK {
			var res struct{ Token string }
			r.Decode(t, &res)
			tokens = append(tokens, res.Token)
			return true, ""
		}
		return false, fmt.Sprintf("token request still answers %d %s", r.Status, bytes.TrimSpace(r.Body))
	})
	checkLog()
}
