package main

import (
	"errors"
	"net/http"
	"sync"

	"github.com/httpkv/httpkv/httpapi"
	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/lease"
	"github.com/httpkv/httpkv/mvcc"
	"github.com/httpkv/httpkv/watch"
)

// leaseRecordCost approximates the backend bytes one lease record takes.
const leaseRecordCost = 64

// leases serves the lease endpoints: it performs grants and revokes
// through the watch store, so the lease records commit with the store's
// writes and a revoke's deletes reach watchers as one revision.
type leases struct {
	store  *watch.Store
	lessor *lease.Lessor
}

func (l *leases) Grant(id, ttl int64) (httpapi.Lease, error) {
	var granted lease.Lease
	_, err := l.store.Write(func(tx *mvcc.WriteTxn) error {
		// A grant adds a record: refused under NOSPACE, as in etcd.
		if err := tx.CheckSpace(leaseRecordCost); err != nil {
			return err
		}
		var err error
		granted, err = l.lessor.Grant(tx, id, ttl)
		return err
	})
	return httpapi.Lease{ID: granted.ID, TTL: granted.TTL}, err
}

// Revoke deletes the lease's keys and the lease in one write, if allowed
// lets it.
func (l *leases) Revoke(id int64, allowed func(keys [][]byte) error) (int64, error) {
	return l.revoke(id, false, allowed)
}

// revoke deletes the lease's keys and forgets it in one write, so its
// keys go at one revision. With onlyExpired, a lease that is no longer
// expired (a stale report, or an ID revoked and granted again since) is
// left alone. allowed, if not nil, may refuse the keys about to go.
func (l *leases) revoke(id int64, onlyExpired bool, allowed func([][]byte) error) (int64, error) {
	ch, err := l.store.Write(func(tx *mvcc.WriteTxn) error {
		// As this write sees the lease: keys attached by earlier writes
		// of the same batch are deleted too.
		st, err := l.lessor.Status(tx, id)
		if err != nil {
			return err
		}
		if onlyExpired && st.Remaining > 0 {
			return nil
		}
		if allowed != nil {
			if err := allowed(st.Keys); err != nil {
				return err
			}
		}
		for _, k := range st.Keys {
			if _, err := tx.DeleteRange(kv.DeleteRequest{Key: k}); err != nil {
				return err
			}
		}
		return l.lessor.Revoke(tx, id)
	})
	return ch.Revision, err
}

func (l *leases) KeepAlive(id int64) (int64, error) { return l.lessor.KeepAlive(id) }

func (l *leases) TimeToLive(id int64, keys bool) (httpapi.LeaseStatus, error) {
	st, err := l.lessor.TimeToLive(id, keys)
	if err != nil {
		return httpapi.LeaseStatus{}, err
	}
	return httpapi.LeaseStatus{ID: st.ID, TTL: st.Remaining, GrantedTTL: st.TTL, Keys: st.Keys}, nil
}

func (l *leases) List() []int64 { return l.lessor.Leases() }

func (l *leases) Errors() []httpapi.ErrorMapping {
	return []httpapi.ErrorMapping{
		{Target: lease.ErrNotFound, Status: http.StatusNotFound, Code: "lease_not_found"},
		{Target: lease.ErrExists, Status: http.StatusConflict, Code: "already_exists"},
		{Target: lease.ErrInvalidTTL, Status: http.StatusBadRequest, Code: "invalid_argument"},
		{Target: lease.ErrInvalidID, Status: http.StatusBadRequest, Code: "invalid_argument"},
	}
}

// revokeExpired revokes the leases the lessor reports expired until stop
// is closed. A batch's revokes are sent together so the store commits them
// in few fsyncs; each still deletes its keys at a revision of its own.
func (l *leases) revokeExpired(stop <-chan struct{}, onError func(error)) {
	const concurrency = 64
	for {
		var ids []int64
		select {
		case <-stop:
			return
		case batch, ok := <-l.lessor.Expired():
			if !ok {
				return
			}
			ids = batch
		}
		var wg sync.WaitGroup
		sem := make(chan struct{}, concurrency)
		for _, id := range ids {
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-sem; wg.Done() }()
				if _, err := l.revoke(id, true, nil); err != nil && !errors.Is(err, lease.ErrNotFound) {
					onError(err)
				}
			}()
		}
		wg.Wait()
	}
}
