package etcd

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/httpkv/httpkv/kv"
)

// Leases are etcd's: granted, renewed, expired and revoked by the
// cluster, so a keep-alive through any gateway renews a lease granted
// through another. Their IDs are the cluster's, shared by every
// namespace; what makes a lease the deployment's is its record (see
// lease_records.go): every call here first makes sure the lease has one
// in this namespace, and answers kv.ErrLeaseNotFound for any other ID.

// maxLeaseID is the largest lease ID the API hands out: 2^53-1, which a
// JavaScript number holds exactly. etcd draws IDs from the whole of
// int64, so the gateway draws them itself.
const maxLeaseID = 1<<53 - 1

// maxLeaseTTL is etcd's longest TTL (its MaxLeaseTTL, about 285 years),
// the embedded store's too (lease.MaxTTL): etcd's own refusal says only
// "too large lease TTL".
const maxLeaseTTL = 9_000_000_000

// grantAttempts bounds the draws of a lease ID that another lease holds.
const grantAttempts = 8

// orphanRevokeTimeout bounds the revoke of a lease granted whose record
// could not be written.
const orphanRevokeTimeout = 5 * time.Second

// Grant grants a lease of ttl seconds with ID id, or with an ID drawn at
// random in [1, 2^53-1] when id is 0, and writes its record. The TTL
// granted may be etcd's minimum, above ttl. Past Options.MaxLeases it
// fails with kv.ErrTooManyLeases.
//
// An ID chosen by the caller that a lease of another namespace holds is
// kv.ErrLeaseExists, as for one of this namespace: IDs are the cluster's.
func (b *Backend) Grant(ctx context.Context, id, ttl int64) (kv.Lease, error) {
	if id < 0 || id > maxLeaseID {
		return kv.Lease{}, kv.Invalidf("lease id %d out of [0, 2^53-1]", id)
	}
	if ttl <= 0 || ttl > maxLeaseTTL {
		return kv.Lease{}, kv.Invalidf("ttl must be 1 to %d seconds, not %d", maxLeaseTTL, ttl)
	}
	if err := b.leaseCount.admit(ctx, b); err != nil {
		return kv.Lease{}, err
	}
	l, err := b.grant(ctx, id, ttl)
	if err != nil {
		b.leaseCount.release()
	}
	return l, err
}

// grant grants the lease and writes its record. The record is put with
// a deadline within the TTL granted, counted from when the grant was
// asked (beforeExpiry): a put etcd takes lands on this grant, never on a
// later holder of the ID once it has expired (see lease_revoke.go). A
// lease whose record could not be written is revoked under the same
// deadline, or, past it, left to expire: it is no deployment's.
func (b *Backend) grant(ctx context.Context, id, ttl int64) (kv.Lease, error) {
	chosen := id != 0
	var granted *pb.LeaseGrantResponse
	var asked time.Time
	for attempt := 1; ; attempt++ {
		if !chosen {
			id = randomLeaseID()
		}
		asked = time.Now()
		err := b.call(ctx, func(ctx context.Context) error {
			var err error
			granted, err = clientv3.RetryLeaseClient(b.cli).LeaseGrant(ctx, &pb.LeaseGrantRequest{ID: id, TTL: ttl})
			if err == nil && granted.Error != "" {
				err = errors.New(granted.Error)
			}
			return err
		})
		if errors.Is(err, kv.ErrLeaseExists) && !chosen && attempt < grantAttempts {
			continue
		}
		if errors.Is(err, kv.ErrLeaseExists) {
			return kv.Lease{}, kv.Errorf(kv.ErrLeaseExists, "lease %d already exists: give another id, or 0 to let the server choose", id)
		}
		if err != nil {
			return kv.Lease{}, err
		}
		break
	}
	b.saw(granted.Header.Revision)
	deadline := beforeExpiry(asked, granted.TTL)
	err := b.call(ctx, func(ctx context.Context) error {
		ctx, cancel := context.WithDeadline(ctx, deadline)
		defer cancel()
		resp, err := b.cli.Put(ctx, b.leaseRecord(id), "", clientv3.WithLease(clientv3.LeaseID(id)))
		if err == nil {
			b.saw(resp.Header.Revision)
		}
		return err
	})
	if err != nil {
		// A lease without a record is no deployment's: give it back
		// (should the gateway die first, it expires after its TTL).
		rctx, cancel := context.WithTimeout(b.ctx, orphanRevokeTimeout)
		_, rerr := b.revokeBefore(rctx, id, deadline)
		cancel()
		if rerr != nil {
			b.onError(fmt.Errorf("etcd: lease %d was granted without its record, and is left to expire within %d s: its revoke failed: %w", id, granted.TTL, rerr))
		}
		return kv.Lease{}, err
	}
	return kv.Lease{ID: id, TTL: granted.TTL}, nil
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

// KeepAlive renews a lease of the namespace to its full TTL.
func (b *Backend) KeepAlive(ctx context.Context, id int64) (int64, error) {
	if err := b.ownLease(ctx, id); err != nil {
		return 0, err
	}
	var ttl int64
	err := b.call(ctx, func(ctx context.Context) error {
		resp, err := b.cli.KeepAliveOnce(ctx, clientv3.LeaseID(id))
		if err != nil {
			return err
		}
		b.saw(resp.Revision)
		ttl = resp.TTL
		return nil
	})
	if errors.Is(err, kv.ErrLeaseNotFound) {
		err = kv.LeaseNotFound(id)
	}
	return ttl, err
}

// TimeToLive reports a lease of the namespace, with its keys if asked,
// sorted: the namespace's keys attached to it, through the read client,
// whose bound refuses an answer too large as it arrives.
func (b *Backend) TimeToLive(ctx context.Context, id int64, keys bool) (kv.LeaseStatus, error) {
	if keys {
		st, _, err := b.leaseStatus(ctx, b.readCli, id, true)
		return st, b.tooLarge(err)
	}
	if err := b.ownLease(ctx, id); err != nil {
		return kv.LeaseStatus{}, err
	}
	st, _, err := b.leaseStatus(ctx, b.cli, id, false)
	return st, err
}

// LeaseKeys reports a lease of the namespace with the namespace's keys
// attached to it, read through the read client (whose bound refuses an
// answer too large as it arrives), each key charged to limits.
func (b *Backend) LeaseKeys(ctx context.Context, id int64, limits *kv.ReadLimits) (kv.LeaseStatus, error) {
	st, _, err := b.leaseStatus(ctx, b.readCli, id, true)
	if err != nil {
		return kv.LeaseStatus{}, b.tooLarge(err)
	}
	for _, k := range st.Keys {
		if err := limits.Charge(len(k)); err != nil {
			return kv.LeaseStatus{}, err
		}
	}
	return st, nil
}

// leaseStatus reads a lease through cli: its TTLs and, with keys, the
// namespace's keys attached to it (without the prefix, sorted) and how
// many other keys it holds. With keys, the lease is the namespace's when
// its record is among them; without, the caller checks that.
func (b *Backend) leaseStatus(ctx context.Context, cli *clientv3.Client, id int64, keys bool) (st kv.LeaseStatus, foreign int, err error) {
	if keys {
		return b.leaseStatusOf(ctx, cli, id, b.leaseRecord(id))
	}
	return b.leaseStatusOf(ctx, cli, id, "")
}

// leaseStatusOf reads a lease through cli as leaseStatus does, with its
// keys when owner is not empty: the key of this namespace's that makes
// it the namespace's (its record, or a revoke's claim), which must be
// among them.
func (b *Backend) leaseStatusOf(ctx context.Context, cli *clientv3.Client, id int64, owner string) (st kv.LeaseStatus, foreign int, err error) {
	if id < 1 || id > maxLeaseID {
		return kv.LeaseStatus{}, 0, kv.LeaseNotFound(id)
	}
	keys := owner != ""
	err = b.call(ctx, func(ctx context.Context) error {
		var opts []clientv3.LeaseOption
		if keys {
			opts = append(opts, clientv3.WithAttachedKeys())
		}
		resp, err := cli.TimeToLive(ctx, clientv3.LeaseID(id), opts...)
		if err != nil {
			return err
		}
		b.saw(resp.Revision)
		if resp.TTL == -1 {
			return kv.LeaseNotFound(id)
		}
		st = kv.LeaseStatus{ID: int64(resp.ID), TTL: max(resp.TTL, 0), GrantedTTL: resp.GrantedTTL}
		if !keys {
			return nil
		}
		record, claim, prefix := []byte(owner), []byte(b.revokeClaim(id)), []byte(b.opts.Namespace+keysPrefix)
		owned := false
		foreign = 0
		st.Keys = make([][]byte, 0, len(resp.Keys))
		for _, k := range resp.Keys {
			switch {
			case bytes.Equal(k, record):
				owned = true
			case bytes.Equal(k, claim):
				// A revoke's claim: the gateway's, as the record is.
			case bytes.HasPrefix(k, prefix):
				st.Keys = append(st.Keys, k[len(prefix):])
			default:
				foreign++
			}
		}
		if !owned {
			return kv.LeaseNotFound(id)
		}
		slices.SortFunc(st.Keys, bytes.Compare)
		return nil
	})
	if err != nil {
		return kv.LeaseStatus{}, 0, err
	}
	return st, foreign, nil
}

// Leases returns the IDs of at most limit leases of the namespace above
// after, ascending, read from their records in one etcd range, and
// whether more follow.
func (b *Backend) Leases(ctx context.Context, after int64, limit int) ([]int64, bool, error) {
	if limit <= 0 || after >= maxLeaseID {
		return nil, false, nil
	}
	var ids []int64
	var more bool
	err := b.call(ctx, func(ctx context.Context) error {
		resp, err := b.cli.Get(ctx, b.leaseRecord(max(after, 0)+1),
			clientv3.WithRange(b.leaseRecordsEnd()), clientv3.WithKeysOnly(),
			clientv3.WithLimit(int64(limit)), clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
		if err != nil {
			return err
		}
		b.saw(resp.Header.Revision)
		ids = make([]int64, 0, len(resp.Kvs))
		for _, p := range resp.Kvs {
			if id, ok := b.leaseOfRecord(p.Key); ok {
				ids = append(ids, id)
			}
		}
		more = resp.More
		return nil
	})
	return ids, more, err
}
