package tests

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// TestAuthLeasePutNeedsWriteOnAttachedKeys checks etcd's rule for a put
// with a lease: the caller needs write access to every key already
// attached to the lease, since the put keeps them alive with it and ties
// its key's fate to theirs. A refused put, plain, conditional or in any
// branch of a txn, changes nothing.
func TestAuthLeasePutNeedsWriteOnAttachedKeys(t *testing.T) {
	t.Parallel()
	f := startRBAC(t)
	alice, bob := f.callers[1], f.callers[2] // see rbacFixture
	if alice.Name != "alice" || bob.Name != "bob" {
		t.Fatalf("callers are %s and %s, want alice and bob", alice.Name, bob.Name)
	}
	appLease := f.grantLease(t, "app/l") // bob may not write app/l
	cfgLease := f.grantLease(t, "cfg")   // alice may not write cfg

	refused := []struct {
		name   string
		caller e2e.AuthCaller
		method string
		path   string
		body   string
		header []string
	}{
		{"put cfg with app/l's lease", bob, "PUT", fmt.Sprintf("%s?lease=%d", e2e.KeyPath("cfg"), appLease), "v", nil},
		{"put If-None-Match with app/l's lease", bob, "PUT", fmt.Sprintf("%s?lease=%d", e2e.KeyPath("cfg2"), appLease), "v", []string{"If-None-Match", "*"}},
		{"put app/m with cfg's lease", alice, "PUT", fmt.Sprintf("%s?lease=%d", e2e.KeyPath("app/m"), cfgLease), "v", nil},
		{"txn put with app/l's lease", bob, "POST", "/v1/txn",
			fmt.Sprintf(`{"success":[{"put":{"key":"cfg","value":"v","lease":%d}}]}`, appLease), nil},
		{"txn put with the lease in the branch not taken", bob, "POST", "/v1/txn",
			fmt.Sprintf(`{"success":[{"put":{"key":"cfg","value":"v"}}],"failure":[{"put":{"key":"cfg","value":"v","lease":%d}}]}`, appLease), nil},
		{"nested txn put with cfg's lease", alice, "POST", "/v1/txn",
			fmt.Sprintf(`{"success":[{"txn":{"success":[{"put":{"key":"app/m","value":"v","lease":%d}}]}}]}`, cfgLease), nil},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			before := authRev(t, f.s, f.root)
			r := f.s.Do(t, tc.method, tc.path, []byte(tc.body), tc.caller.Header(tc.header...)...)
			e2e.WantRefused(t, r, false)
			if after := authRev(t, f.s, f.root); after != before {
				t.Errorf("%s refused, yet the revision moved from %d to %d", r.Req, before, after)
			}
			for id, want := range map[int64][]string{appLease: {"app/l"}, cfgLease: {"cfg"}} {
				var res client.LeaseTimeToLive
				e2e.AuthDo(t, f.s, f.root, http.StatusOK, "GET", fmt.Sprintf("/v1/leases/%d?keys=true", id), "").Decode(t, &res)
				if !slices.Equal(e2e.Deref(res.Keys), want) {
					t.Errorf("lease %d keys after the refused %s = %q, want %q", id, tc.name, res.Keys, want)
				}
			}
		})
	}

	// Who may write every attached key may put with the lease, and the
	// key joins them.
	f.s.Do(t, "PUT", fmt.Sprintf("%s?lease=%d", e2e.KeyPath("app/m"), appLease), []byte("v"), alice.Header()...).Want(t, http.StatusOK)
	f.s.Do(t, "POST", "/v1/txn", []byte(fmt.Sprintf(`{"success":[{"put":{"key":"cfg","value":"v","lease":%d}}]}`, cfgLease)),
		bob.Header("Content-Type", "application/json")...).Want(t, http.StatusOK)
	var res client.LeaseTimeToLive
	e2e.AuthDo(t, f.s, f.root, http.StatusOK, "GET", fmt.Sprintf("/v1/leases/%d?keys=true", appLease), "").Decode(t, &res)
	if want := []string{"app/l", "app/m"}; !slices.Equal(e2e.Deref(res.Keys), want) {
		t.Errorf("lease %d keys = %q, want %q", appLease, res.Keys, want)
	}
	// Once bob's lease holds only keys bob may write, bob may use it.
	e2e.AuthDo(t, f.s, f.root, http.StatusOK, "DELETE", e2e.KeyPath("app/l"), "")
	e2e.AuthDo(t, f.s, f.root, http.StatusOK, "DELETE", e2e.KeyPath("app/m"), "")
	f.s.Do(t, "PUT", fmt.Sprintf("%s?lease=%d", e2e.KeyPath("cfg"), appLease), []byte("v"), bob.Header()...).Want(t, http.StatusOK)
}
