package tests

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// TestPutTTL: a put with ttl grants its key a lease of its own in one
// request; the key goes when the lease expires; a later put with ttl
// moves it to a new lease and revokes the old one; a bad ttl, or one
// with a lease, changes nothing.
func TestPutTTL(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	var first client.PutResponse
	s.Do(t, "PUT", e2e.KeyPath("session/a")+"?ttl=60", []byte("v1")).Ok(t, http.StatusOK, &first)
	if first.Lease == nil || *first.Lease == 0 || s.Get(t, "session/a").Lease != *first.Lease {
		t.Fatalf("PUT ?ttl=60 answered lease %v; the key has lease %d", first.Lease, s.Get(t, "session/a").Lease)
	}
	var ttl client.LeaseTimeToLive
	s.Do(t, "GET", fmt.Sprintf("/v1/leases/%d?keys=true", *first.Lease), nil).Ok(t, http.StatusOK, &ttl)
	if ttl.GrantedTtl != 60 || ttl.Keys == nil || !slices.Equal(*ttl.Keys, []string{"session/a"}) {
		t.Fatalf("the put's lease: granted %d with keys %v, want 60 with session/a", ttl.GrantedTtl, ttl.Keys)
	}
	var second client.PutResponse
	s.Do(t, "PUT", e2e.KeyPath("session/a")+"?ttl=30&prev_kv=true", []byte("v2")).Ok(t, http.StatusOK, &second)
	if second.Lease == nil || *second.Lease == *first.Lease || second.PrevKv == nil || e2e.ValueOf(second.PrevKv) != "v1" {
		t.Fatalf("a second put with ttl answered %+v", second)
	}
	if ids := s.LeaseList(t); !slices.Equal(ids, []int64{*second.Lease}) {
		t.Fatalf("leases after the second put: %v, want only %d: the first, holding no key, revoked", ids, *second.Lease)
	}

	// Bad input: a clear error, and nothing changed.
	before := s.Get(t, "session/a")
	for _, q := range []string{"ttl=0", "ttl=-1", "ttl=2.5", "ttl=x", "ttl=", "ttl=5&lease=" + fmt.Sprint(*second.Lease), "ttl=5&ignore_lease=true"} {
		e := s.Do(t, "PUT", e2e.KeyPath("session/a")+"?"+q, []byte("v3")).WantError(t, http.StatusBadRequest, "invalid_argument")
		if !strings.Contains(e.Message, "ttl") {
			t.Errorf("PUT ?%s: %q does not say what is wrong with ttl", q, e.Message)
		}
	}
	s.Do(t, "PUT", e2e.KeyPath("session/a")+"?ttl=5", []byte("v3"), "If-Match", `"1"`).WantError(t, http.StatusPreconditionFailed, "precondition_failed")
	if after := s.Get(t, "session/a"); e2e.KVString(&after) != e2e.KVString(&before) {
		t.Fatalf("refused puts changed the key: %s, was %s", e2e.KVString(&after), e2e.KVString(&before))
	}
	if ids := s.LeaseList(t); !slices.Equal(ids, []int64{*second.Lease}) {
		t.Fatalf("refused puts left leases: %v, want only %d", ids, *second.Lease)
	}

	// The key goes with its lease.
	s.Do(t, "PUT", e2e.KeyPath("session/short")+"?ttl=1", []byte("v")).Want(t, http.StatusOK)
	e2e.Eventually(t, 60*time.Second, func() (bool, string) {
		r := s.Do(t, "GET", e2e.KeyPath("session/short"), nil)
		return r.Status == http.StatusNotFound, fmt.Sprintf("GET session/short = %d", r.Status)
	})
}

// TestPatchKey applies both kinds of patch through the binary, and
// checks that bad input is a clear error that changes nothing.
func TestPatchKey(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t, "--max-request-bytes=4096")
	var put client.PutResponse
	s.Do(t, "PUT", e2e.KeyPath("conf/app")+"?ttl=600", []byte(`{"replicas": 2, "image": {"tag": "v1"}}`)).Ok(t, http.StatusOK, &put)
	var res client.GetResponse
	s.Do(t, "PATCH", e2e.KeyPath("conf/app"), []byte(`{"image":{"tag":"v2"},"debug":true}`), "Content-Type", "application/merge-patch+json").Ok(t, http.StatusOK, &res)
	if v := e2e.ValueOf(&res.Kv); v != `{"replicas":2,"image":{"tag":"v2"},"debug":true}` || res.Kv.Lease != *put.Lease || res.Kv.Version != 2 {
		t.Fatalf("merge patch wrote %s", e2e.KVString(&res.Kv))
	}
	etag := fmt.Sprintf(`"%d"`, res.Kv.ModRevision)
	s.Do(t, "PATCH", e2e.KeyPath("conf/app"), []byte(`[{"op":"test","path":"/replicas","value":2},{"op":"replace","path":"/replicas","value":3},{"op":"remove","path":"/debug"}]`),
		"Content-Type", "application/json-patch+json", "If-Match", etag).Ok(t, http.StatusOK, &res)
	if v := e2e.ValueOf(&res.Kv); v != `{"replicas":3,"image":{"tag":"v2"}}` || res.Kv.Lease != *put.Lease {
		t.Fatalf("JSON Patch wrote %s", e2e.KVString(&res.Kv))
	}
	s.Do(t, "PATCH", e2e.KeyPath("conf/new"), []byte(`{"a":1}`), "Content-Type", "application/merge-patch+json").Ok(t, http.StatusOK, &res)
	if e2e.ValueOf(&res.Kv) != `{"a":1}` || res.Kv.Version != 1 {
		t.Fatalf("a merge patch of a missing key wrote %s", e2e.KVString(&res.Kv))
	}

	s.Put(t, "conf/text", "plain text")
	before, beforeText := s.Get(t, "conf/app"), s.Get(t, "conf/text")
	merge, jsonPatch := "application/merge-patch+json", "application/json-patch+json"
	for _, tc := range []struct {
		key, body, ctype string
		header           []string
		status           int
		code             string
	}{
		{"conf/app", `{"replicas":`, merge, nil, 400, "invalid_argument"},                                 // a patch that is not JSON
		{"conf/app", `{"op":"remove","path":"/a"}`, jsonPatch, nil, 400, "invalid_argument"},              // not an array
		{"conf/text", `{"a":1}`, merge, nil, 409, "patch_failed"},                                         // a value that is not JSON
		{"conf/app", `[{"op":"remove","path":"/nope"}]`, jsonPatch, nil, 409, "patch_failed"},             // a missing path
		{"conf/app", `[{"op":"test","path":"/replicas","value":9}]`, jsonPatch, nil, 409, "patch_failed"}, // a failed test
		{"conf/missing", `[{"op":"add","path":"/a","value":1}]`, jsonPatch, nil, 404, "key_not_found"},    // JSON Patch needs the key
		{"conf/app", `{"a":1}`, "application/json", nil, 415, "unsupported_media_type"},                   // other types
		{"conf/app", `{"a":1}`, merge, []string{"If-Match", etag}, 412, "precondition_failed"},            // If-Match of an older version
		{"conf/app", `{"big":"` + strings.Repeat("x", 5000) + `"}`, merge, nil, 413, "request_too_large"}, // the body's bound
		{"conf/app", `{"big":"` + strings.Repeat("x", 4060) + `"}`, merge, nil, 409, "patch_failed"},      // the result's
	} {
		r := s.Do(t, "PATCH", e2e.KeyPath(tc.key), []byte(tc.body), append([]string{"Content-Type", tc.ctype}, tc.header...)...)
		r.WantError(t, tc.status, tc.code)
	}
	if after := s.Get(t, "conf/app"); e2e.KVString(&after) != e2e.KVString(&before) {
		t.Fatalf("refused patches changed conf/app: %s, was %s", e2e.KVString(&after), e2e.KVString(&before))
	}
	if after := s.Get(t, "conf/text"); e2e.KVString(&after) != e2e.KVString(&beforeText) {
		t.Fatalf("refused patches changed conf/text: %s", e2e.KVString(&after))
	}
	s.Do(t, "GET", e2e.KeyPath("conf/missing"), nil).WantError(t, http.StatusNotFound, "key_not_found")
}

// TestPatchKeyConcurrent: patches of one key from many clients at once
// each apply to the value as it is when they write: every patch
// acknowledged is in the value, none written over.
func TestPatchKeyConcurrent(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	s.Put(t, "counter", `{}`)
	const clients = 8
	type answer struct {
		i int
		r *e2e.Reply
	}
	done := make(chan answer, clients)
	for i := range clients {
		go func() {
			r, err := s.Send(t.Context(), "PATCH", e2e.KeyPath("counter"), []byte(fmt.Sprintf(`{"c%d":true}`, i)), "Content-Type", "application/merge-patch+json")
			if err != nil {
				r = &e2e.Reply{Req: "PATCH counter", Body: []byte(err.Error())}
			}
			done <- answer{i, r}
		}()
	}
	var acked []int
	for range clients {
		a := <-done
		switch a.r.Status {
		case http.StatusOK:
			acked = append(acked, a.i)
		case http.StatusServiceUnavailable:
			// It gave up after its retries under contention: retry later.
		default:
			t.Fatalf("%s = %d %s", a.r.Req, a.r.Status, a.r.Body)
		}
	}
	kv := s.Get(t, "counter")
	got := e2e.ValueOf(&kv)
	if len(acked) == 0 || strings.Count(got, ":true") != len(acked) || kv.Version != int64(len(acked))+1 {
		t.Fatalf("counter %s at version %d after %d acknowledged patches", got, kv.Version, len(acked))
	}
	for _, i := range acked {
		if !strings.Contains(got, fmt.Sprintf(`"c%d":true`, i)) {
			t.Fatalf("counter %s lost the acknowledged patch of client %d", got, i)
		}
	}
}
