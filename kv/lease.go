package kv

import "slices"

// MaxLeaseID is the largest lease ID, 2^53-1: the largest integer a JSON
// number holds exactly in every client (JavaScript reads them as
// doubles). IDs are in [1, MaxLeaseID]; 0 means no lease.
const MaxLeaseID int64 = 1<<53 - 1

// Lease is a granted lease: its ID and its granted TTL in seconds.
type Lease struct {
	ID, TTL int64
}

// LeaseStatus is a lease's time to live.
type LeaseStatus struct {
	ID int64
	// TTL is the time to live left, in seconds rounded up; 0 once the
	// lease has expired and waits to be revoked.
	TTL        int64
	GrantedTTL int64
	// Keys are the attached keys, sorted, when they were asked for.
	Keys [][]byte
}

// LeaseGuard checks the keys a write is about to touch through leases:
// the keys attached to the leases a put names (the put keeps them alive
// with it, so the caller must be allowed to write them, as in etcd), or
// the keys a revoke deletes. A backend calls it inside the write, with
// the keys as that write sees them, so that no key attached meanwhile
// escapes it; its error fails the write, which changes nothing. A nil
// guard allows everything.
type LeaseGuard func(keys [][]byte) error

// PutLeases returns the leases the puts of r name, in every branch and
// nested txn whichever runs (as etcd checks them), each once.
func (r *TxnRequest) PutLeases() []int64 {
	return putLeases(nil, r)
}

func putLeases(ids []int64, r *TxnRequest) []int64 {
	for _, branch := range [][]Op{r.Success, r.Failure} {
		for _, op := range branch {
			switch {
			case op.Put != nil && op.Put.Lease != 0 && !slices.Contains(ids, op.Put.Lease):
				ids = append(ids, op.Put.Lease)
			case op.Txn != nil:
				ids = putLeases(ids, op.Txn)
			}
		}
	}
	return ids
}
