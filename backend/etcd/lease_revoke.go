package etcd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/httpkv/httpkv/auth"
	"github.com/httpkv/httpkv/kv"
)

// A revoke through the API ends one grant of an ID, and only that one.
// etcd's own revoke names an ID, not a grant, and asks nothing first: a
// revoke sent after the deployment's lease X ended (revoked by another
// request, or expired) revokes whatever lease holds X by then, which
// may be another deployment's that granted X again and put keys on it.
// So a revoke goes in two steps:
//
//  1. Claim the grant: one etcd txn that, if X's record still has the
//     create revision read before, deletes it and puts the claim
//
//     N + "revoke/" + the ID as 16 lowercase hex digits
//
//     attached to the lease, as the record was. Of revokes of one grant
//     at once, exactly one claims it; the others find no record
//     (kv.ErrLeaseNotFound). Without its record, the lease is no longer
//     the deployment's: nothing lists, renews, reads or attaches keys to
//     it through the API. It is still etcd's, though, so no one can
//     grant X again until it ends.
//
//  2. Revoke it, while it is certain that X is still the claimed grant:
//     the claim is among the keys etcd reports for X (the claim goes
//     with the grant that holds it), and etcd takes the revoke before
//     the grant could expire by itself. etcd's lessor ends a lease
//     only once its time is up; a revoke sent with a deadline
//     revokeMargin before the expiry that etcd just reported (half the
//     time left, for leases of a second or two) is
//     proposed by then or not at all, so it comes before the expiry in
//     etcd's log. When the claimed lease has less time left than that,
//     the gateway waits for etcd to expire it instead: either way its
//     keys go at one revision, and the revoke answers once they have.
//
// What a revoke leaves uncertain is made certain by the claim: a revoke
// whose answer was lost is found again by the next revoke of X (the
// claim still exists while the claimed grant does), which finishes it.
//
// A grant with an ID is the other side of the same race: the gateway
// puts the lease's record with a deadline within the TTL etcd just
// granted, so the record lands on that grant and not on a later holder
// of the ID (grant in leases.go).

// revokeTries bounds the revokes a claimed lease is sent that etcd does
// not take.
const revokeTries = 3

// revokeClaimsPrefix is the sub-prefix of the namespace that holds the
// claims of revokes under way.
const revokeClaimsPrefix = "revoke/"

// revokeMargin is how long before a lease's expiry (as etcd reports it)
// a revoke or a record's put must be proposed (beforeExpiry): time for
// the request to reach etcd's leader, whose lessor expires the lease.
const revokeMargin = time.Second

// beforeExpiry returns the deadline of a request that must reach etcd
// before a lease that had ttl seconds left at t expires: revokeMargin
// before, or half the time left when that is less.
func beforeExpiry(t time.Time, ttl int64) time.Time {
	left := time.Duration(ttl) * time.Second
	return t.Add(left - min(revokeMargin, left/2))
}

// minRevokeWindow is the least time worth sending a revoke in: below
// it, the gateway waits for the lease to expire.
const minRevokeWindow = 200 * time.Millisecond

// revokeClaim is the claim's key of lease id.
func (b *Backend) revokeClaim(id int64) string {
	return fmt.Sprintf("%s%s%016x", b.opts.Namespace, revokeClaimsPrefix, uint64(id))
}

// Revoke revokes a lease of the namespace: etcd deletes its keys at one
// revision. It reads the lease's keys first, as etcd holds them: a lease
// that holds a key outside the namespace's keys (attached by a client of
// etcd's own) is refused, so that no revoke through the API deletes what
// the API cannot name. With a guard, the guard sees the keys then; its
// error revokes nothing. (etcd cannot ask it inside the revoke: a key
// attached between the two is not seen, as for Put's guard.)
func (b *Backend) Revoke(ctx context.Context, id int64, guard kv.LeaseGuard) (int64, error) {
	created, err := b.recordCreated(ctx, id)
	if err != nil {
		return 0, err
	}
	// The record created then, if it is still there when the claim is
	// taken, was there when the keys were read: they are this grant's.
	st, foreign, err := b.leaseStatus(ctx, b.cli, id, true)
	if err != nil {
		return 0, err
	}
	if foreign > 0 {
		return 0, kv.Errorf(auth.ErrPermissionDenied, "lease %d holds %d keys outside this deployment's namespace: it is revoked through etcd, not the API", id, foreign)
	}
	if guard != nil && len(st.Keys) > 0 {
		if err := guard(st.Keys); err != nil {
			return 0, err
		}
	}
	nonce, err := b.claimRevoke(ctx, id, created)
	if err != nil {
		return 0, err
	}
	rev, err := b.revokeClaimed(ctx, id)
	if err != nil {
		b.unclaimRevoke(id, nonce)
	}
	return rev, err
}

// recordCreated returns the create revision of lease id's record, or
// kv.ErrLeaseNotFound.
func (b *Backend) recordCreated(ctx context.Context, id int64) (int64, error) {
	if id < 1 || id > maxLeaseID {
		return 0, kv.LeaseNotFound(id)
	}
	var created int64
	err := b.call(ctx, func(ctx context.Context) error {
		resp, err := b.cli.Get(ctx, b.leaseRecord(id), clientv3.WithKeysOnly())
		if err != nil {
			return err
		}
		b.saw(resp.Header.Revision)
		if len(resp.Kvs) == 0 {
			return kv.LeaseNotFound(id)
		}
		created = resp.Kvs[0].CreateRevision
		return nil
	})
	return created, err
}

// claimRevoke claims the grant of lease id whose record was created at
// revision created: deletes the record and puts the claim, attached to
// the lease, in one txn, and returns the claim's value, drawn at random
// to tell it from any other. It fails with kv.ErrLeaseNotFound when the
// record is gone or another one (a grant after it): another revoke
// claimed it, or it ended. When etcd's answer is lost, the claim's value
// says whether the txn was applied.
func (b *Backend) claimRevoke(ctx context.Context, id, created int64) (string, error) {
	record, claim, nonce := b.leaseRecord(id), b.revokeClaim(id), fmt.Sprintf("%016x", randomLeaseID())
	var took bool
	err := b.call(ctx, func(ctx context.Context) error {
		resp, err := b.cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(record), "=", created)).
			Then(clientv3.OpDelete(record), clientv3.OpPut(claim, nonce, clientv3.WithLease(clientv3.LeaseID(id)))).
			Commit()
		if err != nil {
			return err
		}
		b.saw(resp.Header.Revision)
		took = resp.Succeeded
		return nil
	})
	if errors.Is(err, kv.ErrUnavailable) && ctx.Err() == nil {
		rerr := b.call(ctx, func(ctx context.Context) error {
			resp, err := b.cli.Get(ctx, claim)
			if err == nil && len(resp.Kvs) > 0 && string(resp.Kvs[0].Value) == nonce {
				took = true
			}
			return err
		})
		if rerr == nil {
			err = nil
		}
	}
	if err != nil {
		return "", err
	}
	if !took {
		return "", kv.LeaseNotFound(id)
	}
	return nonce, nil
}

// unclaimRevoke gives the deployment back a lease whose revoke failed
// (etcd did not answer): the record again in place of the claim, if the
// claim is still this revoke's (then the lease is still the claimed
// grant, which holds it). A revoke of it can then be asked again.
// Should this fail too, the lease, no longer the deployment's, expires
// after its TTL.
func (b *Backend) unclaimRevoke(id int64, nonce string) {
	record, claim := b.leaseRecord(id), b.revokeClaim(id)
	ctx, cancel := context.WithTimeout(b.ctx, orphanRevokeTimeout)
	defer cancel()
	_, err := b.cli.Txn(ctx).If(clientv3.Compare(clientv3.Value(claim), "=", nonce)).
		Then(clientv3.OpDelete(claim), clientv3.OpPut(record, "", clientv3.WithLease(clientv3.LeaseID(id)))).
		Commit()
	if err != nil {
		b.onError(fmt.Errorf("etcd: the revoke of lease %d failed, and so did giving it back to the deployment; it expires after its TTL: %w", id, err))
	}
}

// revokeClaimed revokes the lease that holds this namespace's claim of
// id, or waits for it to expire when it has too little time left for a
// revoke to be certain to reach etcd first, and returns a revision at
// which its keys are gone. It tries until the lease has gone, the
// request ends, or etcd fails.
func (b *Backend) revokeClaimed(ctx context.Context, id int64) (int64, error) {
	for tries := 1; ; tries++ {
		asked := time.Now()
		ttl, alive, err := b.claimedTTL(ctx, id)
		if err != nil {
			return 0, err
		}
		if !alive {
			return b.currentRevision(ctx)
		}
		// etcd answered after asked, with the seconds left rounded down:
		// the lease expires no sooner than asked + ttl.
		deadline := beforeExpiry(asked, ttl)
		if time.Until(deadline) >= minRevokeWindow {
			rev, err := b.revokeBefore(ctx, id, deadline)
			switch {
			case err == nil:
				return rev, nil
			case errors.Is(err, kv.ErrLeaseNotFound):
				// Taken by a try whose answer was lost, or expired.
				return b.currentRevision(ctx)
			case errors.Is(err, kv.ErrUnavailable) && tries < revokeTries:
				// Not taken in time, or etcd was busy: look again.
				continue
			}
			return 0, err
		}
		wait := time.Until(asked.Add(time.Duration(max(ttl, 0)+1) * time.Second))
		select {
		case <-ctx.Done():
			return 0, context.Cause(ctx)
		case <-b.ctx.Done():
			return 0, fmt.Errorf("%w: the gateway is closing", kv.ErrUnavailable)
		case <-time.After(max(wait, minRevokeWindow)):
		}
	}
}

// claimedTTL reports the seconds left to the lease that holds this
// namespace's claim of id (rounded down, as etcd reports them; zero or
// less once its time is up and etcd has yet to delete its keys), and
// whether such a lease is alive: etcd reports the claim among its keys.
func (b *Backend) claimedTTL(ctx context.Context, id int64) (ttl int64, alive bool, err error) {
	claim := []byte(b.revokeClaim(id))
	err = b.call(ctx, func(ctx context.Context) error {
		resp, err := b.cli.TimeToLive(ctx, clientv3.LeaseID(id), clientv3.WithAttachedKeys())
		if errors.Is(mapErr(err), kv.ErrLeaseNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, k := range resp.Keys {
			if bytes.Equal(k, claim) {
				ttl, alive = resp.TTL, true
				return nil
			}
		}
		return nil
	})
	return ttl, alive, err
}

// revokeBefore revokes lease id, if etcd takes the revoke before
// deadline: past it the request is not sent, and one sent is abandoned.
func (b *Backend) revokeBefore(ctx context.Context, id int64, deadline time.Time) (int64, error) {
	if limit := time.Now().Add(b.opts.RequestTimeout); limit.Before(deadline) {
		deadline = limit
	}
	rctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	resp, err := b.cli.Revoke(rctx, clientv3.LeaseID(id))
	if err != nil {
		if ctx.Err() != nil {
			return 0, context.Cause(ctx)
		}
		return 0, mapErr(err)
	}
	b.saw(resp.Header.Revision)
	return resp.Header.Revision, nil
}
