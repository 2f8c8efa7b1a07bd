package tests

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/httpkv/httpkv/openapi/client"
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
	if alice.name != "alice" || bob.name != "bob" {
		t.Fatalf("callers are %s and %s, want alice and bob", alice.name, bob.name)
	}
	appLease := f.grantLease(t, "app/l") // bob may not write app/l
	cfgLease := f.grantLease(t, "cfg")   // alice may not write cfg

	refused := []struct {
		name   string
		caller authCaller
		method string
		path   string
		body   string
		header []string
	}{
		{"put cfg with app/l's lease", bob, "PUT", fmt.Sprintf("%s?lease=%d", keyPath("cfg"), appLease), "v", nil},
		{"put If-None-Match with app/l's lease", bob, "PUT", fmt.Sprintf("%s?lease=%d", keyPath("cfg2"), appLease), "v", []string{"If-None-Match", "*"}},
		{"put app/m with cfg's lease", alice, "PUT", fmt.Sprintf("%s?lease=%d", keyPath("app/m"), cfgLease), "v", nil},
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
			r := f.s.do(t, tc.method, tc.path, []byte(tc.body), tc.caller.header(tc.header...)...)
			wantRefused(t, r, false)
			if after := authRev(t, f.s, f.root); after != before {
				t.Errorf("%s refused, yet the revision moved from %d to %d", r.req, before, after)
			}
			for id, want := range map[int64][]string{appLease: {"app/l"}, cfgLease: {"cfg"}} {
				var res client.LeaseTimeToLive
				authDo(t, f.s, f.root, http.StatusOK, "GET", fmt.Sprintf("/v1/leases/%d?keys=true", id), "").decode(t, &res)
				if !slices.Equal(deref(res.Keys), want) {
					t.Errorf("lease %d keys after the refused %s = %q, want %q", id, tc.name, res.Keys, want)
				}
			}
		})
	}

	// Who may write every attached key may put with the lease, and the
	// key joins them.
	f.s.do(t, "PUT", fmt.Sprintf("%s?lease=%d", keyPath("app/m"), appLease), []byte("v"), alice.header()...).want(t, http.StatusOK)
	f.s.do(t, "POST", "/v1/txn", []byte(fmt.Sprintf(`{"success":[{"put":{"key":"cfg","value":"v","lease":%d}}]}`, cfgLease)),
		bob.header("Content-Type", "application/json")...).want(t, http.StatusOK)
	var res client.LeaseTimeToLive
	authDo(t, f.s, f.root, http.StatusOK, "GET", fmt.Sprintf("/v1/leases/%d?keys=true", appLease), "").decode(t, &res)
	if want := []string{"app/l", "app/m"}; !slices.Equal(deref(res.Keys), want) {
		t.Errorf("lease %d keys = %q, want %q", appLease, res.Keys, want)
	}
	// Once bob's lease holds only keys bob may write, bob may use it.
	authDo(t, f.s, f.root, http.StatusOK, "DELETE", keyPath("app/l"), "")
	authDo(t, f.s, f.root, http.StatusOK, "DELETE", keyPath("app/m"), "")
	f.s.do(t, "PUT", fmt.Sprintf("%s?lease=%d", keyPath("cfg"), appLease), []byte("v"), bob.header()...).want(t, http.StatusOK)
}
