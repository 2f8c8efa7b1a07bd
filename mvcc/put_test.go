package mvcc

import (
	"errors"
	"testing"

	"github.com/httpkv/httpkv/kv"
)

// TestPutCheckOrder pins which error a put gets when both its lease and
// the key that ignore_value needs are missing: as in etcd, a put of its
// own looks the lease up first, while a txn checks each put's key first.
func TestPutCheckOrder(t *testing.T) {
	tests := []struct {
		name  string
		inTxn bool
		put   kv.PutRequest
		want  error
	}{
		{"lone put, lease and key missing", false, kv.PutRequest{Key: []byte("a"), Lease: 9, IgnoreValue: true}, kv.ErrLeaseNotFound},
		{"lone put, key missing", false, kv.PutRequest{Key: []byte("a"), IgnoreValue: true}, kv.ErrKeyNotFound},
		{"lone put, lease missing", false, kv.PutRequest{Key: []byte("a"), Lease: 9}, kv.ErrLeaseNotFound},
		{"txn put, lease and key missing", true, kv.PutRequest{Key: []byte("a"), Lease: 9, IgnoreValue: true}, kv.ErrKeyNotFound},
		{"txn put, lease missing", true, kv.PutRequest{Key: []byte("a"), Lease: 9}, kv.ErrLeaseNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openTestStoreWith(t, newFakeLessor(1), nil, Options{})
			var err error
			if tt.inTxn {
				_, err = s.Txn(kv.TxnRequest{Success: []kv.Op{{Put: &tt.put}}})
			} else {
				_, err = s.Put(tt.put)
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("%s = %v, want %v", showPut(&tt.put), err, tt.want)
			}
		})
	}
}
