package lease

import (
	"fmt"

	"github.com/httpkv/httpkv/kv"
)

// stagedLease is what the open write batch did to a lease: granted it
// (e is the new entry) or revoked it (e is nil). seq tells the batch's
// changes of one ID apart.
type stagedLease struct {
	e   *entry
	seq uint64
}

// exists reports whether a lease has the ID as the open batch sees it.
// The caller holds mu.
func (l *Lessor) exists(id int64) bool {
	if st, ok := l.staged[id]; ok {
		return st.e != nil
	}
	_, ok := l.leases[id]
	return ok
}

// stage records in the batch's view that the lease with id is now e (nil:
// revoked) and stages the change in tx: commit, run under mu once tx is
// durable, changes the committed state; undo puts the view back. The
// caller holds mu.
//
// For example, a batch that revokes lease 5 and grants it again stages
// {nil, 1} then {e, 2}: after the commit, applying 1 removes the old
// lease but leaves the view to 2, and applying 2 adds the new one and
// clears the view.
func (l *Lessor) stage(tx Txn, id int64, e *entry, commit func()) {
	prev, had := l.staged[id]
	l.seq++
	seq := l.seq
	l.staged[id] = stagedLease{e: e, seq: seq}
	grants := 0
	if e != nil {
		grants = 1
	}
	l.stagedGrants += grants
	tx.Stage(func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.stagedGrants -= grants
		commit()
		if st := l.staged[id]; st.seq == seq {
			delete(l.staged, id)
		}
	}, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.stagedGrants -= grants
		if had {
			l.staged[id] = prev
		} else {
			delete(l.staged, id)
		}
	})
}

// Lookup reports whether the lease exists, expired or not, as the store's
// open write batch sees it: the store refuses a put with a lease it does
// not know. Outside a write it reports the committed state.
func (l *Lessor) Lookup(id int64) bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.exists(id)
}

// Status reports the lease as the store write tx sees it, with its keys:
// what a revoke checks and deletes inside that write. A lease granted by
// the open batch has its whole TTL left. It fails with kv.ErrLeaseNotFound when
// no lease has the ID.
func (l *Lessor) Status(tx Txn, id int64) (Status, error) {
	l.mu.RLock()
	var st Status
	if sl, ok := l.staged[id]; ok {
		if sl.e == nil {
			l.mu.RUnlock()
			return Status{}, kv.LeaseNotFound(id)
		}
		st = Status{Lease: Lease{ID: id, TTL: sl.e.ttl}, Remaining: sl.e.ttl}
	} else {
		e, ok := l.leases[id]
		if !ok {
			l.mu.RUnlock()
			return Status{}, kv.LeaseNotFound(id)
		}
		st = Status{Lease: Lease{ID: id, TTL: e.ttl}, Remaining: ceilSeconds(e.expiry.Sub(l.now()))}
	}
	l.mu.RUnlock()
	keys, err := tx.LeaseKeys(id)
	if err != nil {
		return Status{}, fmt.Errorf("lease: keys of %d: %w", id, err)
	}
	st.Keys = keys
	return st, nil
}
