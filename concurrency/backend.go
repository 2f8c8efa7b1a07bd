package concurrency

import (
	"context"
	"errors"
	"fmt"

	"github.com/httpkv/httpkv/kv"
)

// Backend is what locks and elections need of a store, in package kv's
// terms: etcd's primitives, which every backend of httpkv serves. The
// API's backend (httpapi.Backend) has each of these methods (its Txn
// takes a lease guard besides), so that whatever stands behind the API,
// the embedded store or an etcd cluster, serves locks and elections too.
// Every method may be called from many goroutines at once.
type Backend interface {
	// Txn runs a txn atomically. The package's txns compare create
	// revisions and leases, and put, delete and get single keys.
	Txn(ctx context.Context, r kv.TxnRequest) (kv.TxnResult, error)
	// Range reads a key or a range of keys. A read below the compact
	// revision fails with kv.ErrCompacted.
	Range(ctx context.Context, r kv.RangeRequest) (kv.RangeResult, error)
	// Watch starts a watch; the caller closes it.
	Watch(ctx context.Context, r kv.WatchRequest) (kv.WatchStream, error)
	// TimeToLive reports a lease: kv.ErrLeaseNotFound once it has been
	// revoked or has expired.
	TimeToLive(ctx context.Context, id int64, keys bool) (kv.LeaseStatus, error)
}

// txnIf returns a txn that runs then if every compare holds, otherwise.
func txnIf(cmp []kv.Compare, then, otherwise []kv.Op) kv.TxnRequest {
	return kv.TxnRequest{Compare: cmp, Success: then, Failure: otherwise}
}

// createdAt is the compare that key's create revision is rev (0: that
// the key does not exist).
func createdAt(key []byte, rev int64) kv.Compare {
	return kv.Compare{Key: key, Target: kv.CompareCreate, Result: kv.CompareEqual, Number: rev}
}

// leasedTo is the compare that key is attached to lease.
func leasedTo(key []byte, lease int64) kv.Compare {
	return kv.Compare{Key: key, Target: kv.CompareLease, Result: kv.CompareEqual, Number: lease}
}

func putOp(key, value []byte, lease int64) kv.Op {
	return kv.Op{Put: &kv.PutRequest{Key: key, Value: value, Lease: lease}}
}

func deleteOp(key []byte) kv.Op { return kv.Op{Delete: &kv.DeleteRequest{Key: key}} }

func getOp(key []byte) kv.Op { return kv.Op{Range: &kv.RangeOp{Key: key}} }

// got returns the key the first get of a txn's branch found, or nil.
func got(res kv.TxnResult) *kv.KeyValue {
	for _, r := range res.Responses {
		if r.Range != nil && len(r.Range.KVs) > 0 {
			return &r.Range.KVs[0]
		}
	}
	return nil
}

// byCreate reads the keys under name's prefix in create-revision order
// (newest first if newest), at rev (0: now), at most limit of them (0:
// all), leaving out those created after maxCreate (0: none).
func byCreate(name []byte, rev, limit, maxCreate int64, newest bool) kv.RangeRequest {
	order := kv.SortAscend
	if newest {
		order = kv.SortDescend
	}
	return kv.RangeRequest{Key: Prefix(name), End: PrefixEnd(name), Options: kv.RangeOptions{
		Revision: rev, Limit: limit, SortTarget: kv.SortByCreate, SortOrder: order, MaxCreateRevision: maxCreate,
	}}
}

// nextEvents takes what w has queued: its events in revision order, and
// an error once the watch has ended: a *kv.CompactedError when the
// history it needed was compacted, ErrWatchEnded (wrapped with the
// reason) when the backend ended it.
func nextEvents(w kv.WatchStream) ([]kv.Event, error) {
	// What Next takes counts against the watch's memory bound until
	// released; the events are used at once, so release it on return.
	defer w.Release()
	var out []kv.Event
	for _, r := range w.Next() {
		switch {
		case r.CompactRevision != 0:
			return out, &kv.CompactedError{CompactRevision: r.CompactRevision}
		case r.Canceled:
			return out, fmt.Errorf("%w: %s", ErrWatchEnded, r.CancelReason)
		}
		out = append(out, r.Events...)
	}
	return out, nil
}

// leaseAlive reports whether a lease is alive: granted, and neither
// revoked nor expired.
func leaseAlive(ctx context.Context, b Backend, id int64) (bool, error) {
	_, err := b.TimeToLive(ctx, id, false)
	switch {
	case errors.Is(err, kv.ErrLeaseNotFound):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}
