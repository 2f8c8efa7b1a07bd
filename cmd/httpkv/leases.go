package main

import (
	"github.com/httpkv/httpkv/httpapi"
	"github.com/httpkv/httpkv/lease"
	"github.com/httpkv/httpkv/mvcc"
)

// leaseWriter is the store's write path as the lease manager takes it;
// its commits, a revoke's deletes among them, reach watchers.
type leaseWriter struct{ w *mvcc.Store }

func (lw leaseWriter) Write(fn func(lease.WriteTxn) error) (int64, error) {
	ch, err := lw.w.Write(func(tx *mvcc.WriteTxn) error { return fn(tx) })
	return ch.Revision, err
}

// leases serves the lease endpoints from the lease manager.
type leases struct{ m *lease.Manager }

func (l leases) Grant(id, ttl int64) (httpapi.Lease, error) {
	g, err := l.m.Grant(id, ttl)
	return httpapi.Lease{ID: g.ID, TTL: g.TTL}, err
}

func (l leases) Revoke(id int64, allowed func(keys [][]byte) error) (int64, error) {
	return l.m.Revoke(id, allowed)
}

func (l leases) KeepAlive(id int64) (int64, error) { return l.m.KeepAlive(id) }

func (l leases) TimeToLive(id int64, keys bool) (httpapi.LeaseStatus, error) {
	st, err := l.m.TimeToLive(id, keys)
	if err != nil {
		return httpapi.LeaseStatus{}, err
	}
	return httpapi.LeaseStatus{ID: st.ID, TTL: st.Remaining, GrantedTTL: st.TTL, Keys: st.Keys}, nil
}

func (l leases) List() []int64 { return l.m.Leases() }

// Errors: the lease errors are kv's, which the API maps itself.
func (l leases) Errors() []httpapi.ErrorMapping { return nil }
