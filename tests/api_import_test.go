package tests

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/tests/e2e"
)

// TestImport: an import puts what differs (and with mode=replace
// deletes what the file lacks) at one revision, previews it with
// dry_run, takes an export as it is, and honours If-Match.
func TestImport(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	s.Put(t, "app/same", "1")
	s.Put(t, "app/old", "1")
	s.Put(t, "app/gone", "1")
	otherRev := s.Put(t, "other", "1") // outside the range: the import leaves it be
	body := []byte(`{"key":"app/same","value":"1"}
{"key":"app/old","value":"2"}
{"key_base64":"YXBwL25ldw==","value_base64":"/w=="}
`)
	dry := s.ImportNDJSON(t, "?key=app/&prefix=true&mode=replace&dry_run=true", body, http.StatusOK)
	if dry.Created != 1 || dry.Updated != 1 || dry.Deleted != 1 || dry.Unchanged != 1 || strings.Join(dry.Keys.Deleted, ",") != "app/gone" {
		t.Fatalf("dry run: %+v", dry)
	}
	state, rev := s.RangeState(t, "key=app/&prefix=true")
	if dry.Header.Revision != rev || state != "app/gone=1\napp/old=1\napp/same=1" {
		t.Fatalf("a dry run changed the range: %q at %d", state, rev)
	}

	res := s.ImportNDJSON(t, "?key=app/&prefix=true&mode=replace", body, http.StatusOK, "If-Match", fmt.Sprintf(`"%d"`, rev))
	if res.Header.Revision != rev+1 || res.Created != 1 || res.Updated != 1 || res.Deleted != 1 {
		t.Fatalf("import: %+v, want one revision %d", res, rev+1)
	}
	state, _ = s.RangeState(t, "key=app/&prefix=true")
	if other := s.Get(t, "other"); state != "app/new=\xff\napp/old=2\napp/same=1" || other.ModRevision != otherRev {
		t.Fatalf("after the import: %q, and other %s; want other unchanged since revision %d", state, e2e.KVString(&other), otherRev)
	}
	// The same If-Match again: the range changed after it.
	s.ImportNDJSON(t, "?key=app/&prefix=true", body, http.StatusPreconditionFailed, "If-Match", fmt.Sprintf(`"%d"`, rev))

	// An export imports as it is, into another range of the same store
	// only if its keys are in the scope.
	r := s.Do(t, "GET", "/v1/export?key=app/&prefix=true", nil).Want(t, http.StatusOK)
	again := s.ImportNDJSON(t, "?key=app/&prefix=true&mode=replace", r.Body, http.StatusOK)
	if again.Unchanged != 3 || again.Created+again.Updated+again.Deleted != 0 || again.Header.Revision != rev+1 {
		t.Fatalf("re-importing the export: %+v, want everything unchanged and no revision", again)
	}
	e := s.Do(t, "POST", "/v1/import?key=other", r.Body).WantError(t, http.StatusBadRequest, "invalid_argument")
	if !strings.Contains(e.Message, `line 2: the key "app/new" is outside the range`) {
		t.Fatalf("an export imported into another scope: %q", e.Message)
	}
}

// TestImportRefused: a malformed line, a key outside the scope, a body
// over --max-import-bytes: a clear error, and nothing changed.
func TestImportRefused(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t, "--max-import-bytes=300")
	s.Put(t, "app/a", "1")
	before, rev := s.RangeState(t, "key=%00&from_key=true")
	ok := `{"key":"app/b","value":"2"}` + "\n"
	for _, tc := range []struct {
		query, body string
		status      int
		code, says  string
	}{
		{"", ok + `{"key":"app/c","value":` + "\n", 400, "invalid_argument", "line 2: not a JSON object"},
		{"", ok + `{"key":"app/c"}`, 400, "invalid_argument", "line 2: no value"},
		{"", ok + `{"value":"v"}`, 400, "invalid_argument", "line 2: no key"},
		{"", ok + `["app/c","v"]`, 400, "invalid_argument", "line 2:"},
		{"?key=app/&prefix=true", ok + `{"key":"etc","value":"v"}`, 400, "invalid_argument", `line 2: the key "etc" is outside the range the import names (the prefix "app/")`},
		{"", ok + ok, 400, "invalid_argument", "lines 1 and 2 both give the key"},
		{"?mode=upsert", ok, 400, "invalid_argument", "mode"},
		{"", strings.Repeat(ok, 20), 413, "request_too_large", "--max-import-bytes"},
	} {
		e := s.Do(t, "POST", "/v1/import"+tc.query, []byte(tc.body)).WantError(t, tc.status, tc.code)
		if !strings.Contains(e.Message, tc.says) {
			t.Errorf("import %q: %q, want it to say %q", tc.body, e.Message, tc.says)
		}
	}
	if after, now := s.RangeState(t, "key=%00&from_key=true"); after != before || now != rev {
		t.Fatalf("refused imports changed the store: %q at %d, was %q at %d", after, now, before, rev)
	}
}

// TestRestore is the scenario: a prefix of 1,000 keys deleted and
// half of another changed, then both restored to the revision before at
// one new revision, which a watcher of each gets as one message.
func TestRestore(t *testing.T) {
	t.Parallel()
	const n = 1000
	s := e2e.StartServer(t, "--max-txn-ops=2000")
	var lines []string
	for i := range n {
		lines = append(lines, fmt.Sprintf(`{"key":"users/%04d","value":"user %d"}`, i, i), fmt.Sprintf(`{"key":"config/%04d","value":"setting %d"}`, i, i))
	}
	s.ImportNDJSON(t, "", []byte(strings.Join(lines, "\n")), http.StatusOK)
	users, r := s.RangeState(t, "key=users/&prefix=true")
	config, _ := s.RangeState(t, "key=config/&prefix=true")

	s.Do(t, "DELETE", "/v1/kv?key=users/&prefix=true", nil).Want(t, http.StatusOK)
	var changes []string
	for i := 0; i < n; i += 2 {
		changes = append(changes, fmt.Sprintf(`{"key":"config/%04d","value":"changed"}`, i))
	}
	s.ImportNDJSON(t, "?key=config/&prefix=true", []byte(strings.Join(changes, "\n")), http.StatusOK)
	s.Put(t, "config/new", "created after")
	cur := s.Status(t).Revision

	wUsers := e2e.OpenWatch(t, s, fmt.Sprintf("key=users/&prefix=true&start_revision=%d", cur+1))
	wAll := e2e.OpenWatch(t, s, fmt.Sprintf("key=%%00&from_key=true&start_revision=%d", cur+1))

	var dry e2e.RewriteAnswer
	s.Do(t, "POST", "/v1/restore", []byte(fmt.Sprintf(`{"key":"\u0000","from_key":true,"revision":%d,"dry_run":true}`, r)), "Content-Type", "application/json").Ok(t, http.StatusOK, &dry)
	if dry.Created != n || dry.Updated != n/2 || dry.Deleted != 1 || dry.Header.Revision != cur {
		t.Fatalf("restore dry run: %+v", dry)
	}
	var res e2e.RewriteAnswer
	s.Do(t, "POST", "/v1/restore", []byte(fmt.Sprintf(`{"key":"\u0000","from_key":true,"revision":%d}`, r)), "Content-Type", "application/json").Ok(t, http.StatusOK, &res)
	if res.Header.Revision != cur+1 || res.Created != n || res.Updated != n/2 || res.Deleted != 1 || res.Unchanged != n/2 {
		t.Fatalf("restore: %+v, want one revision %d", res, cur+1)
	}
	if now, _ := s.RangeState(t, "key=users/&prefix=true"); now != users {
		t.Fatal("users/ after the restore differs from what it was")
	}
	if now, _ := s.RangeState(t, "key=config/&prefix=true"); now != config {
		t.Fatal("config/ after the restore differs from what it was")
	}
	if kv := s.Get(t, "config/0000"); kv.Lease != 0 || kv.ModRevision != cur+1 {
		t.Fatalf("a restored key: %s", e2e.KVString(&kv))
	}
	for _, w := range []struct {
		w    *e2e.WatchStream
		want int
	}{{wUsers, n}, {wAll, n + n/2 + 1}} {
		m := w.w.NextData(e2e.WatchTimeout)
		if m.ID != cur+1 || len(m.Events) != w.want {
			t.Fatalf("%s: a message at %d with %d events, want the restore's %d events at %d", w.w.Req, m.ID, len(m.Events), w.want, cur+1)
		}
	}
	s.Put(t, "after", "x")
	if m := wAll.NextData(e2e.WatchTimeout); m.ID != cur+2 || len(m.Events) != 1 {
		t.Fatalf("%s: next message at %d with %d events, want the put at %d: the restore was more than one message", wAll.Req, m.ID, len(m.Events), cur+2)
	}
}

// TestRestoreRefused: bad input and a compacted revision change nothing.
func TestRestoreRefused(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	r := s.Put(t, "a", "1")
	s.Put(t, "a", "2")
	cur := s.Put(t, "b", "1")
	for _, tc := range []struct {
		body   string
		status int
		code   string
	}{
		{`{"key":"a"}`, 400, "invalid_argument"},
		{`{"key":"a","revision":-1}`, 400, "invalid_argument"},
		{`{"revision":2}`, 400, "invalid_argument"},
		{`{"key":"a","prefix":true,"range_end":"b","revision":2}`, 400, "invalid_argument"},
		{`{"key":"a","revision":2,"dry":true}`, 400, "invalid_argument"},
		{`{"key":"a","revision":` + fmt.Sprint(cur+5) + `}`, 400, "future_revision"},
	} {
		s.Do(t, "POST", "/v1/restore", []byte(tc.body), "Content-Type", "application/json").WantError(t, tc.status, tc.code)
	}
	s.Do(t, "POST", "/v1/compact", []byte(fmt.Sprintf(`{"revision":%d,"physical":true}`, cur)), "Content-Type", "application/json").Want(t, http.StatusOK)
	e := s.Do(t, "POST", "/v1/restore", []byte(fmt.Sprintf(`{"key":"a","revision":%d}`, r)), "Content-Type", "application/json").WantError(t, http.StatusGone, "compacted")
	if e.CompactRevision == nil || *e.CompactRevision != cur {
		t.Fatalf("compacted without the compact revision: %+v", e)
	}
	if st := s.Status(t); st.Revision != cur || e2e.ValueOf(e2e.Ptr(s.Get(t, "a"))) != "2" {
		t.Fatalf("refused restores changed the store: revision %d", st.Revision)
	}
}

// TestImportWatchedAsOneMessage: an import larger than what the server
// holds for watchers (--max-watch-pending-bytes) still reaches a watcher
// as one message of one revision.
func TestImportWatchedAsOneMessage(t *testing.T) {
	t.Parallel()
	const n = 20000
	s := e2e.StartServer(t, "--max-watch-pending-bytes=1048576", fmt.Sprintf("--max-txn-ops=%d", n+10))
	w := e2e.OpenWatch(t, s, "key=%00&from_key=true")
	a := s.ImportNDJSON(t, "", importBody(n), http.StatusOK)
	m := w.NextData(e2e.WatchTimeout)
	if m.ID != a.Header.Revision || len(m.Events) != n {
		t.Fatalf("the watcher got a message at %d with %d events, want the import's %d events at %d", m.ID, len(m.Events), n, a.Header.Revision)
	}
}
