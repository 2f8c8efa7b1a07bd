package etcd

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/httpkv/httpkv/kv"
)

// Leases are etcd's: granted, renewed, expired and revoked by the
// cluster, so a keep-alive through any gateway renews a lease granted
// through another.

// maxLeaseID is the largest lease ID the API hands out: 2^53-1, which a
// JavaScript number holds exactly. etcd draws IDs from the whole of
// int64, so the gateway draws them itself.
const maxLeaseID = 1<<53 - 1

// grantAttempts bounds the draws of a lease ID that another lease holds.
const grantAttempts = 8

// Grant grants a lease of ttl seconds with ID id, or with an ID drawn at
// random in [1, 2^53-1] when id is 0. The TTL granted may be etcd's
// minimum, above ttl.
func (b *Backend) Grant(ctx context.Context, id, ttl int64) (kv.Lease, error) {
	if id < 0 || id > maxLeaseID {
		return kv.Lease{}, kv.Invalidf("lease id %d out of [0, 2^53-1]", id)
	}
	if ttl <= 0 {
		return kv.Lease{}, kv.Invalidf("lease ttl %d is not positive", ttl)
	}
	chosen := id != 0
	for attempt := 1; ; attempt++ {
		if !chosen {
			id = randomLeaseID()
		}
		var resp *pb.LeaseGrantResponse
		err := b.call(ctx, func(ctx context.Context) error {
			var err error
			resp, err = clientv3.RetryLeaseClient(b.cli).LeaseGrant(ctx, &pb.LeaseGrantRequest{ID: id, TTL: ttl})
			if err == nil && resp.Error != "" {
				err = errors.New(resp.Error)
			}
			return err
		})
		if errors.Is(err, kv.ErrLeaseExists) && !chosen && attempt < grantAttempts {
			continue
		}
		if err != nil {
			return kv.Lease{}, err
		}
		b.saw(resp.Header.Revision)
		return kv.Lease{ID: resp.ID, TTL: resp.TTL}, nil
	}
}

// randomLeaseID draws an ID in [1, 2^53-1].
func randomLeaseID() int64 {
	var buf [8]byte
	for {
		_, _ = rand.Read(buf[:]) // never fails: it crashes the process instead
		if id := int64(binary.BigEndian.Uint64(buf[:]) & maxLeaseID); id != 0 {
			return id
		}
	}
}

// Revoke revokes a lease: etcd deletes its keys at one revision (none
// when it has none). With a guard, the guard sees the lease's keys first;
// its error revokes nothing.
func (b *Backend) Revoke(ctx context.Context, id int64, guard kv.LeaseGuard) (int64, error) {
	if guard != nil {
		st, err := b.TimeToLive(ctx, id, true)
		if err != nil {
			return 0, err
		}
		if len(st.Keys) > 0 {
			if err := guard(st.Keys); err != nil {
				return 0, err
			}
		}
	}
	var rev int64
	err := b.call(ctx, func(ctx context.Context) error {
		resp, err := b.lease.Revoke(ctx, clientv3.LeaseID(id))
		if err != nil {
			return err
		}
		rev = resp.Header.Revision
		b.saw(rev)
		return nil
	})
	return rev, err
}

// KeepAlive renews a lease to its full TTL.
func (b *Backend) KeepAlive(ctx context.Context, id int64) (int64, error) {
	var ttl int64
	err := b.call(ctx, func(ctx context.Context) error {
		resp, err := b.lease.KeepAliveOnce(ctx, clientv3.LeaseID(id))
		if err != nil {
			return err
		}
		b.saw(resp.Revision)
		ttl = resp.TTL
		return nil
	})
	return ttl, err
}

// TimeToLive reports a lease, with the namespace's keys attached to it if
// asked, sorted.
func (b *Backend) TimeToLive(ctx context.Context, id int64, keys bool) (kv.LeaseStatus, error) {
	var st kv.LeaseStatus
	err := b.call(ctx, func(ctx context.Context) error {
		var opts []clientv3.LeaseOption
		if keys {
			opts = append(opts, clientv3.WithAttachedKeys())
		}
		resp, err := b.lease.TimeToLive(ctx, clientv3.LeaseID(id), opts...)
		if err != nil {
			return err
		}
		b.saw(resp.Revision)
		if resp.TTL == -1 {
			return fmt.Errorf("%w: %d", kv.ErrLeaseNotFound, id)
		}
		st = kv.LeaseStatus{ID: int64(resp.ID), TTL: max(resp.TTL, 0), GrantedTTL: resp.GrantedTTL}
		if keys {
			st.Keys = append(make([][]byte, 0, len(resp.Keys)), resp.Keys...)
			slices.SortFunc(st.Keys, bytes.Compare)
		}
		return nil
	})
	return st, err
}

// Leases returns the IDs of the cluster's leases, sorted.
func (b *Backend) Leases(ctx context.Context) ([]int64, error) {
	var ids []int64
	err := b.call(ctx, func(ctx context.Context) error {
		resp, err := b.lease.Leases(ctx)
		if err != nil {
			return err
		}
		b.saw(resp.Revision)
		ids = make([]int64, len(resp.Leases))
		for i, l := range resp.Leases {
			ids[i] = int64(l.ID)
		}
		slices.Sort(ids)
		return nil
	})
	return ids, err
}
