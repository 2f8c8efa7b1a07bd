package concurrency

import (
	"context"
	"time"

	"github.com/httpkv/httpkv/kv"
)

// Held is a lock that Lock acquired.
type Held struct {
	// Key is the owner key: the lock is held while it exists, and
	// released by deleting it (Unlock), or by its lease ending.
	Key []byte
	// Revision is the store's revision at which the lock was seen held.
	Revision int64
}

// Lock acquires the lock called name for lease, as etcd's v3lock does: it
// puts the key OwnerKey(name, lease) attached to the lease, unless the
// lease has it already (a lease holds a lock at most once, and asking
// again while holding it returns at once), and waits until no older key
// is left under Prefix(name).
//
// It waits at most timeout (0 tries once, without waiting) and as long
// as ctx lasts. If it fails, the key it put is deleted again: ErrTimeout
// when the timeout passed, ctx's cause when ctx ended first,
// ErrLeaseNotFound or ErrKeyDeleted when the key went while waiting. A
// put with a lease that does not exist fails with the backend's error.
func Lock(ctx context.Context, b Backend, name []byte, lease int64, timeout time.Duration) (Held, error) {
	e, err := join(ctx, b, name, lease, nil)
	if err != nil {
		return Held{}, err
	}
	rev, err := e.wait(ctx, b, timeout)
	if err != nil {
		return Held{}, err
	}
	return Held{Key: e.key, Revision: rev}, nil
}

// Unlock releases the lock called name held by key, by deleting key,
// whoever holds it (as etcd's v3lock does); key must be under
// Prefix(name). Releasing a key that no longer exists does nothing. It
// returns the revision of the delete, or the current one.
func Unlock(ctx context.Context, b Backend, name, key []byte) (int64, error) {
	if err := checkOwnerKey(name, key); err != nil {
		return 0, err
	}
	res, err := b.Txn(ctx, txnIf(nil, []kv.Op{deleteOp(key)}, nil))
	return res.Revision, err
}
