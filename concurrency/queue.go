package concurrency

import (
	"bytes"
	"context"
	"errors"
	"time"

	"github.com/httpkv/httpkv/kv"
)

// A lock or an election is a queue of keys under its prefix, ordered by
// create revision: the oldest key holds the lock (leads), the others
// wait. Each waiter waits for the deletion of its immediate predecessor
// only, the newest key older than its own, and then looks again, so that
// a release wakes one waiter rather than all of them.
//
// For example, with keys created at revisions 10 (holder), 12 and 15:
// the waiter at 15 watches the key at 12; when the holder releases, only
// the waiter at 12 wakes, finds no older key, and holds. Were the key at
// 12 deleted first (its lease expired), the waiter at 15 would wake, find
// the key at 10 older than its own, and wait for that one.

// errLost: the waiter's own key disappeared while it waited.
var errLost = errors.New("concurrency: waiting key lost")

// entry is a key in a queue: who owns it and when it was created.
type entry struct {
	name  []byte
	key   []byte
	lease int64
	rev   int64 // the key's create revision
	// created is true when this request created the key, false when it
	// found the key there already (the same lease asked before); only the
	// creator removes it when the wait fails.
	created bool
	// existing is the key as found, when created is false.
	existing *kv.KeyValue
}

// join puts the lease's key, holding value, in the queue of name, unless
// the key is there already.
func join(ctx context.Context, b Backend, name []byte, lease int64, value []byte) (*entry, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if err := checkLease(lease); err != nil {
		return nil, err
	}
	e := &entry{name: name, key: OwnerKey(name, lease), lease: lease}
	res, err := b.Txn(ctx, txnIf(
		[]kv.Compare{createdAt(e.key, 0)},
		[]kv.Op{putOp(e.key, value, lease)},
		[]kv.Op{getOp(e.key)},
	))
	switch {
	case err != nil:
		return nil, err
	case res.Succeeded:
		e.rev, e.created = res.Revision, true
	case got(res) != nil:
		e.existing = got(res)
		e.rev = e.existing.CreateRevision
	default:
		// Deleted between the compare and the get: impossible in one txn,
		// so the backend broke its contract.
		return nil, errors.New("concurrency: txn found the key and then did not")
	}
	return e, nil
}

// wait waits until e is the oldest key of its queue, or for timeout, or
// until ctx is done, and returns the revision at which e was seen oldest.
// When it fails, the key is removed if this request created it: a client
// that gives up leaves nothing in the queue.
func (e *entry) wait(ctx context.Context, b Backend, timeout time.Duration) (int64, error) {
	wctx, cancel := context.WithTimeoutCause(ctx, timeout, ErrTimeout)
	defer cancel()
	rev, err := e.waitTurn(ctx, wctx, b)
	if err == nil && ctx.Err() != nil {
		// The turn came as the caller left: nobody would release it.
		err = context.Cause(ctx)
	}
	if err == nil {
		return rev, nil
	}
	if e.created {
		cctx, cancel := cleanupContext(ctx)
		defer cancel()
		if _, cerr := e.remove(cctx, b); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}
	if errors.Is(err, errLost) {
		return 0, e.lost(ctx, b)
	}
	return 0, err
}

// waitTurn loops: read the key's predecessor, wait for its deletion. ctx
// bounds the reads, wctx the waits.
func (e *entry) waitTurn(ctx, wctx context.Context, b Backend) (int64, error) {
	for {
		// The key itself and its predecessor, in one read: NewestFirst
		// below the key's create revision puts the key first.
		res, err := b.Range(ctx, byCreate(e.name, 0, 2, e.rev, true))
		if err != nil {
			return 0, err
		}
		if len(res.KVs) == 0 || !bytes.Equal(res.KVs[0].Key, e.key) || res.KVs[0].CreateRevision != e.rev {
			return 0, errLost
		}
		if len(res.KVs) == 1 {
			return res.Revision, nil
		}
		if err := e.waitDeletion(ctx, wctx, b, res.KVs[1].Key, res.Revision+1); err != nil {
			return 0, err
		}
	}
}

// waitDeletion waits, from revision from on, for the deletion of pred,
// the key before e's, or of e's own key (errLost). A watch that reports
// compaction ends the wait too: the caller reads the queue again.
func (e *entry) waitDeletion(ctx, wctx context.Context, b Backend, pred []byte, from int64) error {
	pw, err := b.Watch(ctx, kv.WatchRequest{Key: pred, StartRevision: from})
	if err != nil {
		return err
	}
	defer pw.Close()
	own, err := b.Watch(ctx, kv.WatchRequest{Key: e.key, StartRevision: from})
	if err != nil {
		return err
	}
	defer own.Close()
	for {
		select {
		case <-wctx.Done():
			return context.Cause(wctx)
		case <-pw.Ready():
			if gone, err := deleted(pw); gone || err != nil {
				return err
			}
		case <-own.Ready():
			gone, err := deleted(own)
			if gone {
				return errLost
			}
			if err != nil {
				return err
			}
		}
	}
}

// deleted takes what w has and reports whether it holds a delete. A
// compacted watch counts as one: whoever waits must read again.
func deleted(w kv.WatchStream) (bool, error) {
	evs, err := nextEvents(w)
	if errors.Is(err, kv.ErrCompacted) {
		return true, nil
	}
	for _, ev := range evs {
		if ev.Type == kv.EventDelete {
			return true, nil
		}
	}
	return false, err
}

// remove deletes e's key if it is still the one e created.
func (e *entry) remove(ctx context.Context, b Backend) (kv.TxnResult, error) {
	return b.Txn(ctx, txnIf([]kv.Compare{createdAt(e.key, e.rev)}, []kv.Op{deleteOp(e.key)}, nil))
}

// lost says why e's key is gone: its lease ended, or someone deleted it.
func (e *entry) lost(ctx context.Context, b Backend) error {
	alive, err := leaseAlive(ctx, b, e.lease)
	switch {
	case err != nil:
		return err
	case alive:
		return ErrKeyDeleted
	}
	return ErrLeaseNotFound
}
