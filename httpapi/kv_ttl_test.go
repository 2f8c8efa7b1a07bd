package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/httpkv/httpkv/internal/wiretest"
	"github.com/httpkv/httpkv/wire"
)

// getKV reads a key through h.
func getKV(tb testing.TB, h http.Handler, key string) wire.KeyValue {
	tb.Helper()
	var got wire.GetResponse
	rec := mustServe(tb, h, http.StatusOK, "GET", "/v1/kv/"+key, "")
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		tb.Fatal(err)
	}
	return got.KV
}

// leaseIDs lists the leases through h.
func leaseIDs(tb testing.TB, h http.Handler) []int64 {
	tb.Helper()
	var got wire.LeaseList
	rec := mustServe(tb, h, http.StatusOK, "GET", "/v1/leases", "")
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		tb.Fatal(err)
	}
	ids := []int64{}
	for _, l := range got.Leases {
		ids = append(ids, l.ID)
	}
	return ids
}

// putTTL puts key=value with ttl and returns the lease the answer names.
func putTTL(tb testing.TB, h http.Handler, key, value string, ttl int) int64 {
	tb.Helper()
	var got wire.PutResponse
	rec := mustServe(tb, h, http.StatusOK, "PUT", fmt.Sprintf("/v1/kv/%s?ttl=%d", key, ttl), value)
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || got.Lease == 0 {
		tb.Fatalf("PUT ?ttl answered %s: no lease (%v)", rec.Body, err)
	}
	return got.Lease
}

func TestPutTTL(t *testing.T) {
	h, _ := newTestHandler(t, Config{})
	l1 := putTTL(t, h, "a", "v1", 60)
	if kv := getKV(t, h, "a"); kv.Lease != l1 || wiretest.Value(kv) != "v1" {
		t.Fatalf("after PUT a?ttl=60: %+v, want v1 with lease %d", kv, l1)
	}
	var ttl wire.LeaseTimeToLive
	rec := mustServe(t, h, http.StatusOK, "GET", fmt.Sprintf("/v1/leases/%d?keys=true", l1), "")
	if err := json.Unmarshal(rec.Body.Bytes(), &ttl); err != nil || ttl.GrantedTTL != 60 || !slices.Equal(ttl.Keys, []string{"a"}) {
		t.Fatalf("the put's lease: %s, want granted for 60s with the key a", rec.Body)
	}

	// Another put with ttl: a new lease, and the old one, empty, revoked.
	l2 := putTTL(t, h, "a", "v2", 30)
	if l2 == l1 || getKV(t, h, "a").Lease != l2 {
		t.Fatalf("a second put with ttl: lease %d (was %d), key on %d", l2, l1, getKV(t, h, "a").Lease)
	}
	if ids := leaseIDs(t, h); !slices.Equal(ids, []int64{l2}) {
		t.Fatalf("leases after the second put: %v, want only %d", ids, l2)
	}

	// An old lease that holds another key stays.
	mustServe(t, h, http.StatusOK, "PUT", fmt.Sprintf("/v1/kv/b?lease=%d", l2), "vb")
	l3 := putTTL(t, h, "a", "v3", 30)
	both := []int64{l2, l3}
	slices.Sort(both)
	if ids := leaseIDs(t, h); !slices.Equal(ids, both) {
		t.Fatalf("leases after a put moved a off a lease b holds: %v, want %d and %d", ids, l2, l3)
	}
	// A plain put detaches the key and leaves the lease alone.
	mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/a", "v4")
	if ids := leaseIDs(t, h); !slices.Equal(ids, both) {
		t.Fatalf("leases after a plain put: %v, want %d and %d", ids, l2, l3)
	}
}

// TestPutTTLRefused: a put with a bad ttl, or one that fails, changes
// nothing and leaves no lease behind.
func TestPutTTLRefused(t *testing.T) {
	h, _ := newTestHandler(t, Config{})
	mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/a", "v")
	for _, tc := range []struct {
		target string
		header []string
		status int
		code   string
	}{
		{"/v1/kv/a?ttl=0", nil, 400, "invalid_argument"},
		{"/v1/kv/a?ttl=-5", nil, 400, "invalid_argument"},
		{"/v1/kv/a?ttl=1.5", nil, 400, "invalid_argument"},
		{"/v1/kv/a?ttl=", nil, 400, "invalid_argument"},
		{"/v1/kv/a?ttl=abc", nil, 400, "invalid_argument"},
		{"/v1/kv/a?ttl=10&lease=0", nil, 400, "invalid_argument"},
		{"/v1/kv/a?ttl=10&lease=5", nil, 400, "invalid_argument"},
		{"/v1/kv/a?ttl=10&ignore_lease=true", nil, 400, "invalid_argument"},
		{"/v1/kv/a?ttl=10", []string{"If-None-Match", "*"}, 412, "precondition_failed"},
		{"/v1/kv/a?ttl=10", []string{"If-Match", `"99"`}, 412, "precondition_failed"},
		{"/v1/kv/missing?ttl=10&ignore_value=true", nil, 404, "key_not_found"},
		{"/v1/kv/a?ttl=10&ignore_value=true", nil, 400, "invalid_argument"}, // with a value
	} {
		body := "x"
		if tc.status == 404 {
			body = "" // ignore_value takes none
		}
		rec := serve(t, h, "PUT", tc.target, body, tc.header...)
		if rec.Code != tc.status || errorCode(t, rec) != tc.code {
			t.Errorf("PUT %s %v = %d %s, want %d %s", tc.target, tc.header, rec.Code, rec.Body, tc.status, tc.code)
		}
		if kv := getKV(t, h, "a"); wiretest.Value(kv) != "v" || kv.Lease != 0 || kv.ModRevision != 2 {
			t.Errorf("after PUT %s: a is %+v, want v as it was", tc.target, kv)
		}
		if ids := leaseIDs(t, h); len(ids) != 0 {
			t.Errorf("after PUT %s: leases %v, want none", tc.target, ids)
		}
	}
}

// TestPutTTLConditional: If-Match and If-None-Match work with ttl.
func TestPutTTLConditional(t *testing.T) {
	h, _ := newTestHandler(t, Config{})
	rec := mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/n?ttl=10&prev_kv=true", "1", "If-None-Match", "*")
	var got wire.PutResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || got.PrevKV != nil || got.Lease == 0 {
		t.Fatalf("PUT n?ttl If-None-Match: * = %s, want a lease and no prev_kv", rec.Body)
	}
	rev := getKV(t, h, "n").ModRevision
	rec = mustServe(t, h, http.StatusOK, "PUT", "/v1/kv/n?ttl=10&prev_kv=true", "2", "If-Match", fmt.Sprintf(`"%d"`, rev))
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || got.PrevKV == nil || wiretest.Value(*got.PrevKV) != "1" {
		t.Fatalf("PUT n?ttl&prev_kv If-Match = %s, want prev_kv 1", rec.Body)
	}
	if ids := leaseIDs(t, h); !slices.Equal(ids, []int64{got.Lease}) {
		t.Fatalf("leases %v, want only the last put's %d", ids, got.Lease)
	}
}
