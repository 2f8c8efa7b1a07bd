package httpapi

import (
	"fmt"
	"testing"
	"time"

	"github.com/httpkv/httpkv/auth"
	"github.com/httpkv/httpkv/concurrency"
	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/patch"
)

// TestErrorHints: the API's message for a domain error is the domain's
// message and the route or flag that helps, added once; errors that
// carry their own advice, or need none, are answered as they are.
func TestErrorHints(t *testing.T) {
	tooManyOps := (&kv.TxnRequest{Compare: make([]kv.Compare, 3)}).Validate(2)
	p, err := patch.Parse(patch.Merge, []byte(`{"a":"0123456789"}`), 10)
	if err != nil {
		t.Fatal(err)
	}
	_, patchTooLarge := p.Apply([]byte("k"), []byte(`{}`), true)
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"no token", auth.ErrUnauthenticated,
			`the token is missing, invalid or expired: get one with POST /v1/auth/token and send it as "Authorization: Bearer <token>"`},
		{"token in the query", errQueryToken, errQueryToken.Error()},
		{"auth off", auth.ErrNotEnabled, "auth is not enabled: tokens are issued only once it is (POST /v1/auth/enable)"},
		{"no such lease", kv.LeaseNotFound(12345),
			"lease 12345 does not exist (it expired or was revoked): grant a new one with POST /v1/leases"},
		{"a waiter's lease gone", concurrency.ErrLeaseNotFound, concurrency.ErrLeaseNotFound.Error()},
		{"NOSPACE, wrapped", fmt.Errorf("%w: backend size 10 + 5 bytes exceeds quota 12", kv.ErrNoSpace),
			"the backend quota is exceeded (NOSPACE alarm): compact, defrag, then DELETE /v1/alarms"},
		{"txn too long", tooManyOps, "the txn has 3 operations in one list; at most 2 are allowed (--max-txn-ops)"},
		{"too many leases", kv.Errorf(kv.ErrTooManyLeases, "3 leases are alive, as many as the server allows: revoke some, or wait for some to expire"),
			"3 leases are alive, as many as the server allows: revoke some, or wait for some to expire (--max-leases)"},
		{"answer too large", &kv.TooLargeError{MaxBytes: 4096},
			"the answer would hold more than 4096 bytes of keys and values: ask for fewer keys with limit, or for keys_only or count_only (--max-response-bytes)"},
		{"range without a limit", &kv.TooLargeError{MaxKeys: 10000}, (&kv.TooLargeError{MaxKeys: 10000}).Error()},
		{"snapshot of a namespace", kv.Errorf(kv.ErrSnapshotUnsupported, "this gateway serves one namespace (%q): snapshot the cluster with etcdctl snapshot save", "/app/"),
			`this gateway serves one namespace ("/app/"): snapshot the cluster with etcdctl snapshot save, or copy the keys this server serves with GET /v1/export`},
		{"patched value too large", patchTooLarge,
			`the patched value of "k" would be 18 bytes, more than the 10 a value may have (--max-request-bytes)`},
		{"etcd too slow", kv.Errorf(kv.ErrBackendTimeout, "etcd did not answer within %v", 15*time.Second),
			"etcd did not answer within 15s (--etcd-request-timeout); retry after Retry-After"},
		{"history busy", kv.Errorf(kv.ErrHistoryBusy, "the gateway has as many etcd watches open to read history as it may"),
			"the gateway has as many etcd watches open to read history as it may (--etcd-max-history-watches): retry later"},
		{"no hint", kv.ErrKeyNotFound, kv.ErrKeyNotFound.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := toAPIError(tt.err).message; got != tt.want {
				t.Errorf("toAPIError(%v).message = %q, want %q", tt.err, got, tt.want)
			}
		})
	}
}
