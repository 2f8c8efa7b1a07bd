package mvcc

import (
	"errors"
	"testing"
)

// TestPutCheckOrder pins which error a put gets when both its lease and
// the key that ignore_value needs are missing: as in etcd, a put of its
// own looks the lease up first, while a txn checks each put's key first.
func TestPutCheckOrder(t *testing.T) {
	tests := []struct {
		name  string
		inTxn bool
		put   PutRequest
		want  error
	}{
		{"lone put, lease and key missing", false, PutRequest{Key: []byte("a"), Lease: 9, IgnoreValue: true}, ErrLeaseNotFound},
		{"lone put, key missing", false, PutRequest{Key: []byte("a"), IgnoreValue: true}, ErrKeyNotFound},
		{"lone put, lease missing", false, PutRequest{Key: []byte("a"), Lease: 9}, ErrLeaseNotFound},
		{"txn put, lease and key missing", true, PutRequest{Key: []byte("a"), Lease: 9, IgnoreValue: true}, ErrKeyNotFound},
		{"txn put, lease missing", true, PutRequest{Key: []byte("a"), Lease: 9}, ErrLeaseNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openTestStore(t, Options{Lessor: newFakeLessor(1)})
			var err error
			if tt.inTxn {
				_, err = s.Txn(TxnRequest{Success: []Op{{Put: &tt.put}}})
			} else {
				_, err = s.Put(tt.put)
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("%s = %v, want %v", showPut(&tt.put), err, tt.want)
			}
		})
	}
}
