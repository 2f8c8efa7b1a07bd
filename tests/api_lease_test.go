package tests

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// TestLeases covers the lease endpoints: grant with a chosen or a server
// ID, list, time to live with keys, keep-alive, revoke deleting the keys
// in one revision, and the errors.
func TestLeases(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)

	var chosen, auto client.LeaseResponse
	r := s.Do(t, "POST", "/v1/leases", []byte(`{"ttl":600,"id":42}`)).Ok(t, http.StatusCreated, &chosen)
	if chosen.Id != 42 || chosen.Ttl != 600 || chosen.Header.Revision == 0 {
		t.Errorf("%s = %s, want id 42, ttl 600 and a header", r.Req, r.Body)
	}
	r = s.Do(t, "POST", "/v1/leases", []byte(`{"ttl":300}`)).Ok(t, http.StatusCreated, &auto)
	if auto.Id < 1 || auto.Id > 1<<53-1 || auto.Id == 42 || auto.Ttl != 300 {
		t.Errorf("%s = %s, want a new id in [1, 2^53-1] and ttl 300", r.Req, r.Body)
	}
	s.Do(t, "POST", "/v1/leases", []byte(`{"ttl":600,"id":42}`)).WantError(t, http.StatusConflict, "already_exists")
	s.Do(t, "POST", "/v1/leases", []byte(`{"ttl":600,"id":9007199254740991}`)).Want(t, http.StatusCreated)

	// A TTL past the longest says what the longest is, on either backend
	// (etcd itself says only "too large lease TTL").
	if e := s.Do(t, "POST", "/v1/leases", []byte(`{"ttl":9000000001}`)).WantError(t, http.StatusBadRequest, "invalid_argument"); e.Message != "ttl must be 1 to 9000000000 seconds, not 9000000001" {
		t.Errorf("a grant of ttl 9000000001 says %q, want the bound", e.Message)
	}
	var longest client.LeaseResponse
	s.Do(t, "POST", "/v1/leases", []byte(`{"ttl":9000000000}`)).Ok(t, http.StatusCreated, &longest)
	s.Do(t, "DELETE", fmt.Sprintf("/v1/leases/%d", longest.Id), nil).Want(t, http.StatusOK)

	for _, tt := range []struct{ name, body string }{
		{"no ttl", `{}`},
		{"zero ttl", `{"ttl":0}`},
		{"negative ttl", `{"ttl":-5}`},
		{"negative id", `{"ttl":60,"id":-1}`},
		{"id above 2^53-1", `{"ttl":60,"id":9007199254740992}`},
		{"unknown field", `{"ttl":60,"name":"x"}`},
		{"ttl a string", `{"ttl":"60"}`},
		{"not JSON", `ttl=60`},
	} {
		t.Run("grant error/"+tt.name, func(t *testing.T) {
			s.Do(t, "POST", "/v1/leases", []byte(tt.body)).WantError(t, http.StatusBadRequest, "invalid_argument")
		})
	}

	ids := s.LeaseList(t)
	if want := []int64{42, auto.Id, 1<<53 - 1}; !slices.Equal(ids, slices.Sorted(slices.Values(want))) {
		t.Errorf("GET /v1/leases = %v, want %v", ids, want)
	}
	if st := s.Status(t); st.Leases != 3 {
		t.Errorf("GET /v1/status: leases %d, want 3", st.Leases)
	}

	// Attach keys, one of them not UTF-8, and one to the other lease.
	s.Do(t, "PUT", "/v1/kv/l/1?lease=42", []byte("a")).Want(t, http.StatusOK)
	s.Do(t, "PUT", "/v1/kv/l/2?lease=42", []byte("b")).Want(t, http.StatusOK)
	s.Do(t, "PUT", fmt.Sprintf("/v1/kv/l/3?lease=%d", auto.Id), []byte("c")).Want(t, http.StatusOK)
	s.Put(t, "l/4", "no lease")

	var ttl client.LeaseTimeToLive
	r = s.Do(t, "GET", "/v1/leases/42?keys=true", nil).Ok(t, http.StatusOK, &ttl)
	if ttl.Id != 42 || ttl.GrantedTtl != 600 || ttl.Ttl < 1 || ttl.Ttl > 600 || !slices.Equal(e2e.Deref(ttl.Keys), []string{"l/1", "l/2"}) || ttl.KeysBase64 != nil {
		t.Errorf("%s = %s, want id 42, granted_ttl 600, ttl in [1, 600], keys [l/1 l/2]", r.Req, r.Body)
	}
	var bare client.LeaseTimeToLive
	r = s.Do(t, "GET", "/v1/leases/42", nil).Ok(t, http.StatusOK, &bare)
	if bare.Keys != nil || bare.KeysBase64 != nil {
		t.Errorf("%s = %s, want no keys without keys=true", r.Req, r.Body)
	}
	var noKeys client.LeaseTimeToLive
	r = s.Do(t, "GET", "/v1/leases/9007199254740991?keys=1", nil).Ok(t, http.StatusOK, &noKeys)
	if noKeys.Keys == nil || len(*noKeys.Keys) != 0 {
		t.Errorf("%s = %s, want \"keys\":[]", r.Req, r.Body)
	}
	s.Do(t, "PUT", "/v1/kv/l/%FF?lease=9007199254740991", []byte("d")).Want(t, http.StatusOK)
	var binKeys client.LeaseTimeToLive
	r = s.Do(t, "GET", "/v1/leases/9007199254740991?keys=true", nil).Ok(t, http.StatusOK, &binKeys)
	if len(e2e.Deref(binKeys.KeysBase64)) != 1 || string((*binKeys.KeysBase64)[0]) != "l/\xff" || binKeys.Keys != nil {
		t.Errorf("%s = %s, want keys_base64 [l/\\xff]", r.Req, r.Body)
	}

	var ka client.LeaseResponse
	r = s.Do(t, "POST", "/v1/leases/42/keepalive", nil).Ok(t, http.StatusOK, &ka)
	if ka.Id != 42 || ka.Ttl != 600 {
		t.Errorf("%s = %s, want id 42, ttl 600", r.Req, r.Body)
	}

	// Revoke: both keys go in one revision (over etcd, after the one
	// that claims the lease for the revoke, at which no key changes).
	before := s.Status(t).Revision
	want := before + 1
	if e2e.OnEtcd(t) {
		want++
	}
	rev := s.Do(t, "DELETE", "/v1/leases/42", nil).Want(t, http.StatusOK).Revision(t)
	if rev != want {
		t.Errorf("DELETE /v1/leases/42: revision %d, want %d: one revision for the lease's keys", rev, want)
	}
	var l client.ListResponse
	s.Do(t, "GET", "/v1/kv?key=l/&prefix=true", nil).Ok(t, http.StatusOK, &l)
	if got := e2e.ListKeys(l); !slices.Equal(got, []string{"l/3", "l/4", "l/\xff"}) {
		t.Errorf("after the revoke the keys are %q, want [l/3 l/4 l/\\xff]", got)
	}
	s.Do(t, "GET", fmt.Sprintf("/v1/kv?key=l/&prefix=true&revision=%d", before), nil).Ok(t, http.StatusOK, &l)
	if got := e2e.ListKeys(l); len(got) != 5 {
		t.Errorf("before the revoke the keys were %q, want 5", got)
	}
	s.Do(t, "PUT", "/v1/kv/l/5?lease=42", []byte("x")).WantError(t, http.StatusNotFound, "lease_not_found")

	// A lease with no keys goes without a revision; over etcd, with the
	// two that claim it and revoke it (backend/etcd/lease_revoke.go), at
	// which none of the deployment's keys changes.
	var bare2 client.LeaseResponse
	s.Do(t, "POST", "/v1/leases", []byte(`{"ttl":60}`)).Ok(t, http.StatusCreated, &bare2)
	before = s.Status(t).Revision
	want = before
	if e2e.OnEtcd(t) {
		want += 2
	}
	if rev := s.Do(t, "DELETE", fmt.Sprintf("/v1/leases/%d", bare2.Id), nil).Want(t, http.StatusOK).Revision(t); rev != want {
		t.Errorf("revoking a lease without keys: revision %d, want %d", rev, want)
	}

	for _, tt := range []struct {
		method, path string
		status       int
		code         string
	}{
		{"GET", "/v1/leases/42", 404, "lease_not_found"},
		{"GET", "/v1/leases/42?keys=true", 404, "lease_not_found"},
		{"POST", "/v1/leases/42/keepalive", 404, "lease_not_found"},
		{"DELETE", "/v1/leases/42", 404, "lease_not_found"},
		{"GET", "/v1/leases/12345", 404, "lease_not_found"},
		{"GET", "/v1/leases/abc", 400, "invalid_argument"},
		{"GET", "/v1/leases/0", 400, "invalid_argument"},
		{"GET", "/v1/leases/-3", 400, "invalid_argument"},
		{"POST", "/v1/leases/9007199254740992/keepalive", 400, "invalid_argument"},
		{"DELETE", "/v1/leases/x", 400, "invalid_argument"},
		{"GET", fmt.Sprintf("/v1/leases/%d?keys=perhaps", auto.Id), 400, "invalid_argument"},
	} {
		t.Run(fmt.Sprintf("error/%s %s", tt.method, tt.path), func(t *testing.T) {
			s.Do(t, tt.method, tt.path, nil).WantError(t, tt.status, tt.code)
		})
	}

	// Leases and their keys survive a restart.
	s.Restart()
	var restored client.LeaseTimeToLive
	r = s.Do(t, "GET", fmt.Sprintf("/v1/leases/%d?keys=true", auto.Id), nil).Ok(t, http.StatusOK, &restored)
	if restored.GrantedTtl != 300 || !slices.Equal(e2e.Deref(restored.Keys), []string{"l/3"}) {
		t.Errorf("after a restart %s = %s, want granted_ttl 300 and keys [l/3]", r.Req, r.Body)
	}
	s.Do(t, "GET", "/v1/leases/42", nil).WantError(t, http.StatusNotFound, "lease_not_found")
}
