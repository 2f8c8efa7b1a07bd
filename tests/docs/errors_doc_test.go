package docs

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/tests/e2e"
)

// errorExample is one row of docs/errors.md: a request that fails with
// code, run against a fresh server in the order of the table.
type errorExample struct {
	code, when   string
	method, path string
	body         string
	header       []string
	setup        func(tb testing.TB, s *e2e.Server) // before the request
	// flags, when set, start a server of the example's own with them.
	flags []string
	// send, when set, makes the request instead of sending method, path
	// and body as they are (which then only show it in the table).
	send           func(tb testing.TB, s *e2e.Server) *e2e.Reply
	status         int // filled in by the run
	message, allow string
}

func errorExamples() []*errorExample {
	put := func(path, body string) func(tb testing.TB, s *e2e.Server) {
		return func(tb testing.TB, s *e2e.Server) { s.Do(tb, "PUT", path, []byte(body)).Want(tb, 200) }
	}
	post := func(path, body string, want int) func(tb testing.TB, s *e2e.Server) {
		return func(tb testing.TB, s *e2e.Server) {
			s.Do(tb, "POST", path, []byte(body), "Content-Type", "application/json").Want(tb, want)
		}
	}
	// An import whose If-Match names the revision before the last put
	// of its range.
	importChanged := &errorExample{code: "precondition_failed", when: "an import with If-Match whose range changed after that revision",
		method: "POST", path: "/v1/import?key=app/&prefix=true", body: `{"key":"app/x","value":"2"}`}
	importChanged.setup = func(tb testing.TB, s *e2e.Server) {
		put("/v1/kv/app/x", "1")(tb, s)
		var st struct{ Revision int64 }
		s.Do(tb, "GET", "/v1/status", nil).Ok(tb, 200, &st)
		importChanged.header = []string{"If-Match", fmt.Sprintf(`"%d"`, st.Revision)}
		put("/v1/kv/app/y", "1")(tb, s)
	}
	return []*errorExample{
		{code: "invalid_argument", when: "malformed JSON or parameter, an unknown query parameter or JSON field, an empty key, a duplicate key in a txn, too many txn ops",
			method: "GET", path: "/v1/kv?key=app/&prefx=true"},
		{code: "invalid_argument", when: "a range selector on the one-key path",
			method: "GET", path: "/v1/kv/app/?prefix=true"},
		{code: "invalid_argument", when: "an unknown field of a JSON body, named by its path",
			method: "POST", path: "/v1/txn", body: `{"success":[{"putt":{"key":"a","value":"b"}}]}`},
		{code: "invalid_argument", when: "a compare without its operand",
			method: "POST", path: "/v1/txn", body: `{"compare":[{"key":"a","target":"version","result":"equal"}]}`},
		{code: "future_revision", when: "a read at a revision above the current one",
			method: "GET", path: "/v1/kv/a?revision=99"},
		{code: "key_not_found", when: "GET /v1/kv/{key} of a key that does not exist (carries revision)",
			method: "GET", path: "/v1/kv/missing"},
		{code: "lease_not_found", when: "a put with, a keep-alive or a revoke of a lease that does not exist",
			method: "PUT", path: "/v1/kv/a?lease=12345", body: "v"},
		{code: "user_not_found", when: "a user that does not exist", method: "GET", path: "/v1/auth/users/nobody"},
		{code: "role_not_found", when: "a role that does not exist", method: "GET", path: "/v1/auth/roles/nobody"},
		{code: "permission_not_found", when: "revoking a permission the role does not have",
			setup:  post("/v1/auth/roles", `{"name":"reader"}`, 201),
			method: "DELETE", path: "/v1/auth/roles/reader/permissions?key=app/&prefix=true"},
		{code: "no_leader", when: "the leader of an election without candidates", method: "GET", path: "/v1/elections/jobs/leader"},
		{code: "not_found", when: "a path the API does not have", method: "GET", path: "/v1/kvs"},
		{code: "stream_not_found", when: "a watch stream that does not exist, was deleted, or was dropped after a while without a connection",
			method: "DELETE", path: "/v1/watch/streams/gone"},
		{code: "watch_not_found", when: "a watcher of a watch stream that does not exist or has ended",
			method: "DELETE", path: "/v1/watch/streams/{stream}/watches/9",
			send: func(tb testing.TB, s *e2e.Server) *e2e.Reply {
				var created struct{ Stream string }
				s.Do(tb, "POST", "/v1/watch/streams", nil).Ok(tb, 201, &created)
				return s.Do(tb, "DELETE", "/v1/watch/streams/"+created.Stream+"/watches/9", nil)
			}},
		{code: "method_not_allowed", when: "a method the path does not have (the Allow header lists those it has)",
			method: "POST", path: "/v1/kv/a"},
		{code: "lock_timeout", when: "a lock or campaign not won within timeout",
			setup: func(tb testing.TB, s *e2e.Server) {
				post("/v1/leases", `{"ttl":60,"id":100}`, 201)(tb, s)
				post("/v1/leases", `{"ttl":60,"id":200}`, 201)(tb, s)
				post("/v1/locks/deploy", `{"lease":100}`, 200)(tb, s)
			},
			method: "POST", path: "/v1/locks/deploy?timeout=0s", body: `{"lease":200}`},
		{code: "already_exists", when: "a user, role or lease ID that already exists",
			method: "POST", path: "/v1/leases", body: `{"ttl":60,"id":100}`},
		{code: "patch_failed", when: "a PATCH that cannot apply: the value is not JSON, a JSON Patch path is missing or its test fails",
			setup:  put("/v1/kv/conf", `{"a":1}`),
			method: "PATCH", path: "/v1/kv/conf", body: `[{"op":"test","path":"/a","value":2}]`, header: []string{"Content-Type", "application/json-patch+json"}},
		{code: "compacted", when: "a read below the compact revision (carries compact_revision)",
			setup: func(tb testing.TB, s *e2e.Server) {
				put("/v1/kv/c", "1")(tb, s)
				put("/v1/kv/c", "2")(tb, s)
				var st struct{ Revision int64 }
				s.Do(tb, "GET", "/v1/status", nil).Ok(tb, 200, &st)
				post("/v1/compact", fmt.Sprintf(`{"revision":%d}`, st.Revision), 200)(tb, s)
			},
			method: "GET", path: "/v1/kv/c?revision=2"},
		{code: "precondition_failed", when: "If-Match on a key that changed or does not exist, If-None-Match: * on one that exists (carries kv)",
			method: "PUT", path: "/v1/kv/counter", body: "1", header: []string{"If-Match", `"3"`}},
		importChanged,
		{code: "not_leader", when: "proclaim or resign by a candidate that no longer leads",
			method: "POST", path: "/v1/elections/jobs/resign", body: `{"leader":{"name":"jobs","key":"jobs/64","revision":3,"lease":100}}`},
		{code: "request_too_large", when: "a body over --max-request-bytes (--max-import-bytes for an import)",
			method: "PUT", path: "/v1/kv/big", body: strings.Repeat("x", 2048)},
		{code: "unsupported_media_type", when: "a PATCH body that is neither application/merge-patch+json nor application/json-patch+json",
			method: "PATCH", path: "/v1/kv/conf", body: `{"a":2}`, header: []string{"Content-Type", "application/json"}},
		{code: "unauthenticated", when: "auth enabled and the token missing, invalid or expired (WWW-Authenticate: Bearer)",
			setup: func(tb testing.TB, s *e2e.Server) {
				post("/v1/auth/users", `{"name":"root","password":"pw"}`, 201)(tb, s)
				s.Do(tb, "PUT", "/v1/auth/users/root/roles/root", nil).Want(tb, 200)
				post("/v1/auth/users", `{"name":"ann","password":"pw"}`, 201)(tb, s)
				post("/v1/auth/enable", "", 200)(tb, s)
			},
			method: "GET", path: "/v1/kv/a"},
		{code: "permission_denied", when: "the user's roles do not allow the operation on every key it touches",
			method: "GET", path: "/v1/kv/a"},
		{code: "too_many_requests", when: "overload protection (--max-inflight-request-bytes, --max-held-answer-bytes, --max-leases, --etcd-max-history-watches, the bounds of watch streams), or too many failed token requests for one user from one address; retry after Retry-After",
			setup: func(tb testing.TB, s *e2e.Server) {
				for range 20 {
					r := s.Do(tb, "POST", "/v1/auth/token", []byte(`{"name":"ann","password":"wrong"}`))
					if r.Status == 429 {
						return
					}
					r.Want(tb, 401)
				}
				tb.Fatal("20 failed token requests were never answered 429")
			},
			method: "POST", path: "/v1/auth/token", body: `{"name":"ann","password":"wrong"}`},
		{code: "unavailable", when: "the server is shutting down, its backend failed, or etcd cannot serve a gateway (no member reachable, or no quorum): the message says which; retry after Retry-After, on another gateway over etcd",
			flags: []string{},
			setup: func(tb testing.TB, s *e2e.Server) {
				post("/v1/leases", `{"ttl":60,"id":100}`, 201)(tb, s)
				post("/v1/leases", `{"ttl":60,"id":200}`, 201)(tb, s)
				post("/v1/locks/deploy", `{"lease":100}`, 200)(tb, s)
			},
			method: "POST", path: "/v1/locks/deploy?timeout=1m", body: `{"lease":200}` + " (SIGTERM while it waits)",
			send: lockWaitAtShutdown},
		{code: "no_space", when: "the backend quota is exceeded (NOSPACE alarm active)",
			flags:  []string{"--quota-backend-bytes=1"},
			method: "PUT", path: "/v1/kv/a", body: "v"},
	}
}

// lockWaitAtShutdown sends a lock request that waits behind the holder of
// deploy, and stops the server while it does.
func lockWaitAtShutdown(tb testing.TB, s *e2e.Server) *e2e.Reply {
	answer := make(chan *e2e.Reply, 1)
	go func() {
		r, err := s.Send(context.Background(), "POST", "/v1/locks/deploy?timeout=1m", []byte(`{"lease":200}`))
		if err != nil {
			r = &e2e.Reply{Status: 0, Body: []byte(err.Error())}
		}
		answer <- r
	}()
	e2e.Eventually(tb, e2e.RequestTimeout, func() (bool, string) {
		var page struct{ Count int64 }
		s.Do(tb, "GET", "/v1/kv?key=deploy/&prefix=true&count_only=true", nil).Ok(tb, 200, &page)
		return page.Count == 2, fmt.Sprintf("the lock has %d keys, want the holder's and the waiter's", page.Count)
	})
	s.Stop()
	return <-answer
}

// TestErrorsDoc runs the example of every row of docs/errors.md against
// the real binary and checks that the table shows what the server said;
// with -update it rewrites the table instead.
func TestErrorsDoc(t *testing.T) {
	e2e.EmbeddedOnly(t, "the table is what the embedded store answers; a gateway's revisions in the messages are etcd's")
	// Cheap password hashes: the failed token requests of too_many_requests
	// must come faster than the limiter's refill (one every 2 s), which
	// bcrypt at its default cost does not on a loaded machine.
	shared := e2e.StartServer(t, "--max-request-bytes=1024", "--bcrypt-cost=4")
	examples := errorExamples()
	for _, ex := range examples {
		s := shared
		if ex.flags != nil {
			s = e2e.StartServer(t, ex.flags...)
		}
		if ex.setup != nil {
			ex.setup(t, s)
		}
		header := ex.header
		if ex.code == "permission_denied" {
			var tok struct{ Token string }
			s.Do(t, "POST", "/v1/auth/token", []byte(`{"name":"ann","password":"pw"}`)).Ok(t, 200, &tok)
			header = append(header, "Authorization", "Bearer "+tok.Token)
		}
		var body []byte
		if ex.body != "" {
			body = []byte(ex.body)
		}
		var r *e2e.Reply
		if ex.send != nil {
			r = ex.send(t, s)
		} else {
			var err error
			if r, err = s.Send(context.Background(), ex.method, ex.path, body, header...); err != nil {
				t.Fatal(err)
			}
		}
		var e struct {
			Error struct{ Code, Message string }
		}
		if err := json.Unmarshal(r.Body, &e); err != nil || e.Error.Code != ex.code {
			t.Fatalf("%s %s = %d %s, want error %s", ex.method, ex.path, r.Status, r.Body, ex.code)
		}
		ex.status, ex.message, ex.allow = r.Status, e.Error.Message, r.Header.Get("Allow")
		if ex.code == "method_not_allowed" && ex.allow == "" {
			t.Errorf("%s %s: 405 without an Allow header", ex.method, ex.path)
		}
	}
	checkErrorsTable(t, errorsTable(examples))
}

const (
	errorsDoc      = "../../docs/errors.md"
	errorsTableBeg = "<!-- table: generated by TestErrorsDoc (go test ./tests/docs/ -run TestErrorsDoc -update) -->\n"
	errorsTableEnd = "<!-- end of the generated table -->\n"
)

// errorsTable renders the examples as docs/errors.md shows them.
func errorsTable(examples []*errorExample) string {
	var b strings.Builder
	b.WriteString("| HTTP | code | when | example request | example message |\n|---|---|---|---|---|\n")
	cell := func(s string) string { return strings.ReplaceAll(s, "|", "\\|") }
	for _, ex := range examples {
		req := ex.method + " " + ex.path
		if ex.body != "" {
			body := ex.body
			if len(body) > 80 {
				body = fmt.Sprintf("(%d bytes)", len(body))
			}
			req += " " + body
		}
		for i := 0; i+1 < len(ex.header); i += 2 {
			req += " (" + ex.header[i] + ": " + ex.header[i+1] + ")"
		}
		msg := ex.message
		if ex.allow != "" {
			msg += " (Allow: " + ex.allow + ")"
		}
		fmt.Fprintf(&b, "| %d | `%s` | %s | `%s` | %s |\n", ex.status, ex.code, cell(ex.when), cell(req), cell(msg))
	}
	return b.String()
}

// checkErrorsTable fails unless docs/errors.md holds table between its
// markers, or rewrites it there with -update.
func checkErrorsTable(t *testing.T, table string) {
	doc, err := os.ReadFile(errorsDoc)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok1 := strings.Cut(string(doc), errorsTableBeg)
	old, after, ok2 := strings.Cut(rest, errorsTableEnd)
	if !ok1 || !ok2 {
		t.Fatalf("%s lacks the markers of its generated table", errorsDoc)
	}
	if old == table {
		return
	}
	if *e2e.UpdateDocs {
		if err := os.WriteFile(errorsDoc, []byte(before+errorsTableBeg+table+errorsTableEnd+after), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s is stale: run go test ./tests -run TestErrorsDoc -update; the server says:\n%s", errorsDoc, table)
}
