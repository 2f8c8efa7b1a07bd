package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// TestStatusAndCompact covers GET /v1/status, POST /v1/compact and
// POST /v1/defrag.
func TestStatusAndCompact(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	// The revisions are those of a fresh store, which begins at 1; a
	// gateway's cluster has taken some before the test begins (its
	// deployment's marker): at(R) is the revision R of a fresh store.
	off := s.Status(t).Revision - 1
	at := func(rev int64) int64 { return rev + off }
	for i := range 20 {
		s.Put(t, fmt.Sprintf("k%d", i%5), strings.Repeat("v", 1000))
	}
	r := s.Do(t, "GET", "/v1/status", nil).Want(t, http.StatusOK)
	var fields map[string]json.RawMessage
	r.Decode(t, &fields)
	want := []string{"alarms", "compact_revision", "db_size", "db_size_in_use", "header", "keys", "leases", "revision", "version", "watchers"}
	if got := slices.Sorted(maps.Keys(fields)); !slices.Equal(got, want) {
		t.Errorf("GET /v1/status fields = %v, want %v", got, want)
	}
	var st client.Status
	r.Decode(t, &st)
	if st.Version != "0.1.0" || st.Revision != at(21) || st.Header.Revision != at(21) || st.CompactRevision != 0 ||
		st.Keys != 5 || st.Leases != 0 || st.DbSize <= 0 || st.DbSizeInUse <= 0 || st.DbSizeInUse > st.DbSize ||
		st.Alarms == nil || len(st.Alarms) != 0 {
		t.Errorf("GET /v1/status = %s, want version 0.1.0, revision %d, 5 keys, sizes, no alarms", r.Body, at(21))
	}

	compact := func(body string) *e2e.Reply { return s.Do(t, "POST", "/v1/compact", []byte(body)) }
	compactAt := func(rev int64) *e2e.Reply { return compact(fmt.Sprintf(`{"revision":%d}`, rev)) }
	if rev := compactAt(at(10)).Want(t, http.StatusOK).Revision(t); rev != at(21) {
		t.Errorf("POST /v1/compact: header.revision %d, want the current %d", rev, at(21))
	}
	if st := s.Status(t); st.CompactRevision != at(10) || st.Revision != at(21) {
		t.Errorf("after compacting at %d: status compact_revision %d, revision %d; want %d, %d", at(10), st.CompactRevision, st.Revision, at(10), at(21))
	}
	for _, tt := range []struct {
		body   string
		status int
		code   string
	}{
		{fmt.Sprintf(`{"revision":%d}`, at(10)), 410, "compacted"},
		{fmt.Sprintf(`{"revision":%d}`, at(9)), 410, "compacted"},
		{fmt.Sprintf(`{"revision":%d}`, at(22)), 400, "future_revision"},
		{`{"revision":0}`, 400, "invalid_argument"},
		{`{"revision":-1}`, 400, "invalid_argument"},
		{`{}`, 400, "invalid_argument"},
		{`{"revision":"12"}`, 400, "invalid_argument"},
		{`{"revision":12,"physical":"yes"}`, 400, "invalid_argument"},
		{`{"rev":12}`, 400, "invalid_argument"},
		{`[12]`, 400, "invalid_argument"},
		{``, 400, "invalid_argument"},
	} {
		e := compact(tt.body).WantError(t, tt.status, tt.code)
		if tt.status == 410 && e2e.Deref(e.CompactRevision) != at(10) {
			t.Errorf("POST /v1/compact %s: compact_revision %d, want %d", tt.body, e2e.Deref(e.CompactRevision), at(10))
		}
	}
	compact(fmt.Sprintf(`{"revision":%d,"physical":true}`, at(21))).Want(t, http.StatusOK)
	s.Do(t, "GET", fmt.Sprintf("/v1/kv?revision=%d", at(20)), nil).WantError(t, http.StatusGone, "compacted")
	s.Do(t, "GET", fmt.Sprintf("/v1/kv?revision=%d", at(21)), nil).Want(t, http.StatusOK)

	var d client.DefragResponse
	r = s.Do(t, "POST", "/v1/defrag", nil).Ok(t, http.StatusOK, &d)
	if d.DbSize <= 0 || d.Header.Revision != at(21) {
		t.Errorf("%s = %s, want a db_size and header revision %d", r.Req, r.Body, at(21))
	}
	if st := s.Status(t); st.DbSize != d.DbSize {
		t.Errorf("after defrag: status db_size %d, want %d as defrag said", st.DbSize, d.DbSize)
	}
	for i := range 5 {
		if kv := s.Get(t, fmt.Sprintf("k%d", i)); kv.Version != 4 {
			t.Errorf("after compaction and defrag: k%d %s, want version 4", i, e2e.KVString(&kv))
		}
	}

	// The revision and the compaction outlive a restart.
	s.Restart()
	if st := s.Status(t); st.Revision != at(21) || st.CompactRevision != at(21) || st.Keys != 5 {
		t.Errorf("after a restart: status revision %d, compact_revision %d, keys %d; want %d, %d, 5", st.Revision, st.CompactRevision, st.Keys, at(21), at(21))
	}
	s.Do(t, "GET", fmt.Sprintf("/v1/kv?revision=%d", at(20)), nil).WantError(t, http.StatusGone, "compacted")
	compactAt(at(21)).WantError(t, http.StatusGone, "compacted")
	if rev := s.Put(t, "k0", "after"); rev != at(22) {
		t.Errorf("the first put after a restart at revision %d made revision %d, want %d", at(21), rev, at(22))
	}
}

// TestServiceRoutes covers /health, unknown routes and methods, and that
// every error is JSON.
func TestServiceRoutes(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	r := s.Do(t, "GET", "/health", nil).Want(t, http.StatusOK)
	if strings.TrimSpace(string(r.Body)) != `{"health":true}` {
		t.Errorf("GET /health = %s, want {\"health\":true}", r.Body)
	}
	tests := []struct {
		method, path string
		status       int
	}{
		{"GET", "/v1/nothing", 404},
		{"GET", "/v2/kv/a", 404},
		{"GET", "/v1", 404},
		{"POST", "/v1/leases/1/renew", 404},
		{"PATCH", "/v1/leases/1", 405},
		{"POST", "/v1/kv/a", 405},
		{"GET", "/v1/txn", 405},
		{"PUT", "/v1/compact", 405},
		{"POST", "/v1/status", 405},
		{"DELETE", "/v1/watch", 405},
		{"PUT", "/v1/leases", 405},
		{"POST", "/health", 405},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			r := s.Do(t, tt.method, tt.path, nil)
			if r.Status != tt.status {
				t.Fatalf("%s = %d %s, want %d", r.Req, r.Status, r.Body, tt.status)
			}
			// CheckReply has checked the error's shape already.
			if ct := r.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
				t.Errorf("%s: Content-Type %q, want application/json; charset=utf-8", r.Req, ct)
			}
		})
	}
}

// TestMalformedJSON: every endpoint taking a JSON body answers 400
// invalid_argument to a malformed one, null included (which encoding/json
// would take as an empty object: a txn that does nothing).
func TestMalformedJSON(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	bodies := []string{``, `{`, `{"ttl":1,}`, `null`, ` null `, `null x`, `{"a":1}{"a":2}`, "\xff", `"string"`, `{"revision":1e400}`}
	for _, path := range []string{"/v1/txn", "/v1/compact", "/v1/leases"} {
		for _, b := range bodies {
			t.Run(fmt.Sprintf("%s %q", path, b), func(t *testing.T) {
				s.Do(t, "POST", path, []byte(b), "Content-Type", "application/json").WantError(t, http.StatusBadRequest, "invalid_argument")
			})
		}
	}
}

// TestRequestTooLarge: bodies over --max-request-bytes answer 413, with a
// Content-Length or without one.
func TestRequestTooLarge(t *testing.T) {
	t.Parallel()
	const limit = 1024
	s := e2e.StartServer(t, fmt.Sprintf("--max-request-bytes=%d", limit))
	big := bytes.Repeat([]byte("x"), limit+1)
	s.Do(t, "PUT", "/v1/kv/k", big[:limit]).Want(t, http.StatusOK)

	tests := []struct {
		name    string
		method  string
		path    string
		body    []byte
		chunked bool
	}{
		{"put", "PUT", "/v1/kv/k", big, false},
		{"put chunked", "PUT", "/v1/kv/k", big, true},
		{"put much larger", "PUT", "/v1/kv/k", bytes.Repeat(big, 100), false},
		{"txn", "POST", "/v1/txn", []byte(`{"success":[{"put":{"key":"k","value":"` + string(big) + `"}}]}`), false},
		{"txn chunked", "POST", "/v1/txn", []byte(`{"success":[{"put":{"key":"k","value":"` + string(big) + `"}}]}`), true},
		{"lease", "POST", "/v1/leases", []byte(`{"ttl":60` + strings.Repeat(" ", limit) + `}`), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body io.Reader = bytes.NewReader(tt.body)
			if tt.chunked {
				body = io.MultiReader(body) // hides the length: sent chunked
			}
			req, err := http.NewRequest(tt.method, s.URL+tt.path, body)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := s.Client.Do(req)
			if err != nil {
				t.Fatalf("%s %s: %v", tt.method, tt.path, err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			r := &e2e.Reply{Req: tt.method + " " + tt.path, Status: resp.StatusCode, Header: resp.Header, Body: b}
			e2e.CheckReply(t, r)
			r.WantError(t, http.StatusRequestEntityTooLarge, "request_too_large")
		})
	}
	if kv := s.Get(t, "k"); len(e2e.ValueOf(&kv)) != limit || kv.Version != 1 {
		t.Errorf("after the refused requests k is %d bytes at version %d, want the first %d-byte value", len(e2e.ValueOf(&kv)), kv.Version, limit)
	}
}

// TestNoSpace fills a backend with a tiny quota until the NOSPACE alarm
// goes off: writes that add data answer 507, reads and deletes still work,
// and after deleting, compacting and defragmenting the alarm disarms and
// writes work again.
func TestNoSpace(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t, "--quota-backend-bytes=150000")
	value := bytes.Repeat([]byte("v"), 4000)
	var acked []string
	for i := 0; ; i++ {
		if i == 200 {
			t.Fatalf("200 puts of %d bytes did not exceed a quota of 150000 bytes", len(value))
		}
		key := fmt.Sprintf("fill/%03d", i)
		r := s.Do(t, "PUT", e2e.KeyPath(key), value)
		if r.Status == http.StatusInsufficientStorage {
			r.WantError(t, http.StatusInsufficientStorage, "no_space")
			break
		}
		r.Want(t, http.StatusOK)
		acked = append(acked, key)
	}
	if len(acked) == 0 {
		t.Fatal("the first put already answered 507")
	}

	var alarms client.Alarms
	s.Do(t, "GET", "/v1/alarms", nil).Ok(t, http.StatusOK, &alarms)
	if !slices.Equal(alarms.Alarms, []client.AlarmsAlarms{"NOSPACE"}) {
		t.Fatalf("GET /v1/alarms = %v, want [NOSPACE]", alarms.Alarms)
	}
	if st := s.Status(t); !slices.Equal(st.Alarms, []client.StatusAlarms{"NOSPACE"}) {
		t.Errorf("GET /v1/status: alarms %v, want [NOSPACE]", st.Alarms)
	}
	r := s.Do(t, "GET", "/health", nil)
	if r.Status != http.StatusServiceUnavailable {
		t.Errorf("GET /health with NOSPACE = %d %s, want 503", r.Status, r.Body)
	}

	// Writes that add data are refused, even tiny ones.
	s.Do(t, "PUT", "/v1/kv/small", []byte("x")).WantError(t, http.StatusInsufficientStorage, "no_space")
	s.Do(t, "PUT", e2e.KeyPath(acked[0])+"?ignore_value=true", nil).WantError(t, http.StatusInsufficientStorage, "no_space")
	s.Txn(t, `{"success":[{"put":{"key":"small","value":"x"}}]}`).WantError(t, http.StatusInsufficientStorage, "no_space")
	s.Do(t, "POST", "/v1/leases", []byte(`{"ttl":60}`)).WantError(t, http.StatusInsufficientStorage, "no_space")
	// Reads, read-only txns and deletes work.
	if kv := s.Get(t, acked[0]); e2e.ValueOf(&kv) != string(value) {
		t.Errorf("GET %s under NOSPACE = %d bytes, want the %d written", acked[0], len(e2e.ValueOf(&kv)), len(value))
	}
	s.Txn(t, `{"success":[{"range":{"key":"fill/","prefix":true,"count_only":true}}]}`).Want(t, http.StatusOK)
	// A txn that only deletes costs no space, as in etcd.
	var delTxn client.TxnResponse
	s.Txn(t, `{"compare":[{"key":`+e2e.JSONString(acked[0])+`,"target":"version","result":"greater","version":0}],"success":[{"delete":{"key":`+e2e.JSONString(acked[0])+`}}]}`).Ok(t, http.StatusOK, &delTxn)
	if !delTxn.Succeeded || delTxn.Responses[0].Delete.Deleted != 1 {
		t.Errorf("a txn deleting %s under NOSPACE = %+v, want it to succeed and delete 1", acked[0], delTxn)
	}
	acked = acked[1:]
	var del client.DeleteResponse
	s.Do(t, "DELETE", "/v1/kv?key=fill/&prefix=true", nil).Ok(t, http.StatusOK, &del)
	// etcd applies the write that takes a member past its quota, and
	// answers it NOSPACE (its quota applier checks after applying): over
	// etcd, the put answered 507 may be there too.
	if del.Deleted != int64(len(acked)) && !(e2e.OnEtcd(t) && del.Deleted == int64(len(acked))+1) {
		t.Errorf("DELETE of the filled keys under NOSPACE: deleted %d, want %d", del.Deleted, len(acked))
	}
	// The alarm stays until disarmed.
	s.Do(t, "PUT", "/v1/kv/small", []byte("x")).WantError(t, http.StatusInsufficientStorage, "no_space")

	// Reclaim the space, then disarm.
	s.Do(t, "POST", "/v1/compact", []byte(fmt.Sprintf(`{"revision":%d,"physical":true}`, del.Header.Revision))).Want(t, http.StatusOK)
	s.Do(t, "POST", "/v1/defrag", nil).Want(t, http.StatusOK)
	s.Do(t, "DELETE", "/v1/alarms", nil).Ok(t, http.StatusOK, &alarms)
	if len(alarms.Alarms) != 0 {
		t.Errorf("DELETE /v1/alarms = %v, want none left", alarms.Alarms)
	}
	s.Do(t, "PUT", "/v1/kv/small", []byte("x")).Want(t, http.StatusOK)
	s.Do(t, "POST", "/v1/leases", []byte(`{"ttl":60}`)).Want(t, http.StatusCreated)
	s.Do(t, "GET", "/health", nil).Want(t, http.StatusOK)
	if st := s.Status(t); len(st.Alarms) != 0 {
		t.Errorf("GET /v1/status after disarming: alarms %v, want none", st.Alarms)
	}

	// Full again: the alarm outlives a restart, as in etcd.
	for i := 0; ; i++ {
		if i == 200 {
			t.Fatal("could not fill the backend a second time")
		}
		if r := s.Do(t, "PUT", e2e.KeyPath(fmt.Sprintf("again/%03d", i)), value); r.Status == http.StatusInsufficientStorage {
			break
		}
	}
	s.Restart()
	s.Do(t, "GET", "/v1/alarms", nil).Ok(t, http.StatusOK, &alarms)
	if !slices.Equal(alarms.Alarms, []client.AlarmsAlarms{"NOSPACE"}) {
		t.Errorf("GET /v1/alarms after a restart = %v, want [NOSPACE]", alarms.Alarms)
	}
	s.Do(t, "PUT", "/v1/kv/small", []byte("y")).WantError(t, http.StatusInsufficientStorage, "no_space")
}
