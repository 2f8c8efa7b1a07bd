package main

import (
	"errors"
	"net/http"

	"github.com/httpkv/httpkv/httpapi"
	"github.com/httpkv/httpkv/lease"
	"github.com/httpkv/httpkv/mvcc"
	"github.com/httpkv/httpkv/watch"
)

// leases serves the lease endpoints: it performs grants and revokes
// through the watch store, so the lease records commit with the store's
// writes and a revoke's deletes reach watchers as one revision.
type leases struct {
	store  *watch.Store
	lessor *lease.Lessor
}

func (l *leases) Grant(id, ttl int64) (httpapi.Lease, error) {
	if len(l.store.KV().Alarms()) > 0 {
		return httpapi.Lease{}, mvcc.ErrNoSpace // as etcd: no grants under NOSPACE
	}
	var granted lease.Lease
	_, err := l.store.Write(func(tx *mvcc.WriteTxn) error {
		var err error
		granted, err = l.lessor.Grant(tx, id, ttl)
		return err
	})
	return httpapi.Lease{ID: granted.ID, TTL: granted.TTL}, err
}

// Revoke deletes the lease's keys and the lease in one write.
func (l *leases) Revoke(id int64) (int64, error) {
	ch, err := l.store.Write(func(tx *mvcc.WriteTxn) error {
		keys, err := l.lessor.Keys(id)
		if err != nil {
			return err
		}
		for _, k := range keys {
			if _, err := tx.DeleteRange(mvcc.DeleteRequest{Key: k}); err != nil {
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

// revokeExpired revokes the leases the lessor reports expired until the
// lessor closes its channel or stop is closed.
func (l *leases) revokeExpired(stop <-chan struct{}, onError func(error)) {
	for {
		select {
		case <-stop:
			return
		case ids, ok := <-l.lessor.Expired():
			if !ok {
				return
			}
			for _, id := range ids {
				if _, err := l.Revoke(id); err != nil && !errors.Is(err, lease.ErrNotFound) {
					onError(err)
				}
			}
		}
	}
}
