package embedded

import (
	"context"

	"github.com/httpkv/httpkv/kv"
)

// Grant grants a lease through the lease manager.
func (b *Backend) Grant(_ context.Context, id, ttl int64) (kv.Lease, error) {
	g, err := b.leases.Grant(id, ttl)
	return kv.Lease{ID: g.ID, TTL: g.TTL}, err
}

// Revoke revokes a lease: its keys go at one revision.
func (b *Backend) Revoke(_ context.Context, id int64, guard kv.LeaseGuard) (int64, error) {
	return b.leases.Revoke(id, guard)
}

// KeepAlive renews a lease.
func (b *Backend) KeepAlive(_ context.Context, id int64) (int64, error) {
	return b.leases.KeepAlive(id)
}

// TimeToLive reports a lease.
func (b *Backend) TimeToLive(_ context.Context, id int64, keys bool) (kv.LeaseStatus, error) {
	st, err := b.leases.TimeToLive(id, keys)
	if err != nil {
		return kv.LeaseStatus{}, err
	}
	return kv.LeaseStatus{ID: st.ID, TTL: st.Remaining, GrantedTTL: st.TTL, Keys: st.Keys}, nil
}

// LeaseKeys reports a lease with its keys, within limits.
func (b *Backend) LeaseKeys(_ context.Context, id int64, limits *kv.ReadLimits) (kv.LeaseStatus, error) {
	st, err := b.leases.TimeToLiveKeys(id, limits)
	if err != nil {
		return kv.LeaseStatus{}, err
	}
	return kv.LeaseStatus{ID: st.ID, TTL: st.Remaining, GrantedTTL: st.TTL, Keys: st.Keys}, nil
}

// Leases returns at most limit lease IDs above after, ascending, and
// whether more follow.
func (b *Backend) Leases(_ context.Context, after int64, limit int) ([]int64, bool, error) {
	ids, more := b.leases.Page(after, limit)
	return ids, more, nil
}
