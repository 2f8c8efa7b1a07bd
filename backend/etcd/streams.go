package etcd

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/httpkv/httpkv/kv"
)

// Streams of many watchers (/v1/watch/streams) are the deployment's, not
// a gateway's: each is a record in etcd,
//
//	N + "streams/" + id                   its definition (opaque here: the
//	                                      API's encoding of its watchers
//	                                      and owner)
//	N + "streamowners/" + group + "/" + id  a key per stream, group a hash
//	                                      of what it counts against (its
//	                                      owner), whose value is its count
//	                                      of live watchers in decimal, for
//	                                      the bounds on streams and
//	                                      watchers, per owner and in all
//
// both attached to a lease of their own whose TTL is the stream's idle
// timeout and a second (leaseTTL): the gateway serving a connection of
// the stream keeps it alive, so that a stream nobody reads is deleted by
// etcd itself once the TTL has passed since its last connection ended,
// whichever gateways died in between. These leases have no record under N+"lease/": the API never
// lists, reads or revokes them. Records are changed by compare-and-swap
// on their mod revision, so that watch IDs given by two gateways at once
// never collide; a change that adds watchers or streams is made only if
// no owner key changed since the counts it was checked against were read
// (a compare of the mod revision of the whole streamowners/ prefix), so
// that two gateways adding at once never pass a bound together.

// Sub-prefixes of the streams' records.
const (
	streamsPrefix      = "streams/"
	streamOwnersPrefix = "streamowners/"
)

// streamKey is the record's key of stream id.
func (b *Backend) streamKey(id string) string { return b.opts.Namespace + streamsPrefix + id }

// streamOwnerKey is the key that counts stream id against group.
func (b *Backend) streamOwnerKey(group, id string) string {
	return b.streamOwnersOf(group) + id
}

// streamOwnersOf is the prefix of group's owner keys: a hash, so that any
// group's name makes a key of fixed length.
func (b *Backend) streamOwnersOf(group string) string {
	h := sha256.Sum256([]byte(group))
	return b.opts.Namespace + streamOwnersPrefix + hex.EncodeToString(h[:16]) + "/"
}

// leaseTTL is the TTL in whole seconds of a stream's lease, whose idle
// timeout is d: a second more than d, so that renewals every fraction of
// d keep it however loaded etcd or the gateway are. The gateway that
// served the stream last drops it at d itself (the API's
// DeleteStreamRecord); the lease is for streams never read and gateways
// gone.
func leaseTTL(d time.Duration) int64 {
	return int64(math.Ceil(d.Seconds())) + 1
}

// CreateStreamRecord stores a new stream's record, counted against group
// with its watchers, on a lease of ttl; false if id is taken, or if w is
// conditional and an owner key changed since w.AsOf.
func (b *Backend) CreateStreamRecord(ctx context.Context, id, group string, data []byte, w kv.StreamWatchers, ttl time.Duration) (bool, error) {
	var created bool
	err := b.call(ctx, func(ctx context.Context) error {
		lease, err := b.cli.Grant(ctx, leaseTTL(ttl))
		if err != nil {
			return err
		}
		key := b.streamKey(id)
		resp, err := b.cli.Txn(ctx).
			If(append(b.unchangedSince(w.AsOf), clientv3.Compare(clientv3.CreateRevision(key), "=", 0))...).
			Then(clientv3.OpPut(key, string(data), clientv3.WithLease(lease.ID)),
				clientv3.OpPut(b.streamOwnerKey(group, id), strconv.Itoa(max(w.Live, 0)), clientv3.WithLease(lease.ID))).
			Commit()
		if err != nil || !resp.Succeeded {
			// The lease holds nothing: let it go now rather than at its TTL.
			_, _ = b.cli.Revoke(ctx, lease.ID)
		}
		if err != nil {
			return err
		}
		b.saw(resp.Header.Revision)
		created = resp.Succeeded
		return nil
	})
	return created, err
}

// StreamRecord returns stream id's record and its version (its mod
// revision); nil when there is none.
func (b *Backend) StreamRecord(ctx context.Context, id string) (data []byte, version int64, err error) {
	err = b.call(ctx, func(ctx context.Context) error {
		resp, err := b.cli.Get(ctx, b.streamKey(id))
		if err != nil {
			return err
		}
		b.saw(resp.Header.Revision)
		if len(resp.Kvs) == 1 {
			data, version = resp.Kvs[0].Value, resp.Kvs[0].ModRevision
		}
		return nil
	})
	return data, version, err
}

// UpdateStreamRecord replaces stream id's record, counted against group,
// if it is still at version, and its count of watchers as w says; ok is
// false, and nothing changes, when it is not (changed since, or gone), or
// when w is conditional and an owner key changed since w.AsOf. It
// returns the new version.
func (b *Backend) UpdateStreamRecord(ctx context.Context, id, group string, data []byte, w kv.StreamWatchers, version int64) (newVersion int64, ok bool, err error) {
	err = b.call(ctx, func(ctx context.Context) error {
		key, owner := b.streamKey(id), b.streamOwnerKey(group, id)
		cmps := append(b.unchangedSince(w.AsOf),
			clientv3.Compare(clientv3.ModRevision(key), "=", version), clientv3.Compare(clientv3.CreateRevision(key), ">", 0))
		ops := []clientv3.Op{clientv3.OpPut(key, string(data), clientv3.WithIgnoreLease())}
		if w.Live >= 0 {
			// The owner key exists as long as the record does: both are
			// on the record's lease, and deleted together.
			cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(owner), ">", 0))
			ops = append(ops, clientv3.OpPut(owner, strconv.Itoa(w.Live), clientv3.WithIgnoreLease()))
		}
		resp, err := b.cli.Txn(ctx).If(cmps...).Then(ops...).Commit()
		if err != nil {
			return err
		}
		b.saw(resp.Header.Revision)
		ok, newVersion = resp.Succeeded, resp.Header.Revision
		return nil
	})
	return newVersion, ok, err
}

// DeleteStreamRecord deletes stream id's record, if it is still at
// version (any version when 0), then its lease, which takes its owner
// key with it; false if it had none, or another version.
func (b *Backend) DeleteStreamRecord(ctx context.Context, id string, version int64) (bool, error) {
	var deleted bool
	err := b.call(ctx, func(ctx context.Context) error {
		key := b.streamKey(id)
		resp, err := b.cli.Get(ctx, key, clientv3.WithKeysOnly())
		if err != nil {
			return err
		}
		b.saw(resp.Header.Revision)
		if len(resp.Kvs) == 0 || version != 0 && resp.Kvs[0].ModRevision != version {
			return nil
		}
		rec := resp.Kvs[0]
		del, err := b.cli.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(key), "=", rec.ModRevision)).
			Then(clientv3.OpDelete(key)).
			Commit()
		if err != nil {
			return err
		}
		b.saw(del.Header.Revision)
		if !del.Succeeded {
			return nil // changed meanwhile
		}
		deleted = true
		if lease := clientv3.LeaseID(rec.Lease); lease != clientv3.NoLease {
			// The owner key goes with it; a lease gone already took it.
			_, _ = b.cli.Revoke(ctx, lease)
		}
		return nil
	})
	return deleted, err
}

// TouchStreamRecord renews the lease of stream id's record: etcd deletes
// the record once its TTL passes without a renewal. false if the record
// is gone.
func (b *Backend) TouchStreamRecord(ctx context.Context, id string) (bool, error) {
	var alive bool
	err := b.call(ctx, func(ctx context.Context) error {
		resp, err := b.cli.Get(ctx, b.streamKey(id), clientv3.WithKeysOnly())
		if err != nil {
			return err
		}
		b.saw(resp.Header.Revision)
		if len(resp.Kvs) == 0 {
			return nil
		}
		_, err = b.cli.KeepAliveOnce(ctx, clientv3.LeaseID(resp.Kvs[0].Lease))
		alive = err == nil
		return nil
	})
	return alive, err
}

// CountStreamRecords counts the deployment's streams and their watchers,
// in all and those counted against group, from the owner keys: one read
// of at most as many small keys as the deployment may have streams.
func (b *Backend) CountStreamRecords(ctx context.Context, group string) (kv.StreamCounts, error) {
	var c kv.StreamCounts
	err := b.call(ctx, func(ctx context.Context) error {
		resp, err := b.cli.Get(ctx, b.opts.Namespace+streamOwnersPrefix, clientv3.WithPrefix())
		if err != nil {
			return err
		}
		b.saw(resp.Header.Revision)
		c = kv.StreamCounts{AsOf: resp.Header.Revision}
		mine := []byte(b.streamOwnersOf(group))
		for _, o := range resp.Kvs {
			// An owner key without a count (made before counts were
			// kept) counts no watcher.
			n, _ := strconv.ParseInt(string(o.Value), 10, 64)
			c.Streams++
			c.Watchers += n
			if bytes.HasPrefix(o.Key, mine) {
				c.GroupStreams++
				c.GroupWatchers += n
			}
		}
		return nil
	})
	return c, err
}

// unchangedSince is the compare that no owner key was made or changed
// after revision rev: none when rev is 0. (A key deleted since, as an
// idle stream's lease expired, only lowers the counts.)
func (b *Backend) unchangedSince(rev int64) []clientv3.Cmp {
	if rev == 0 {
		return nil
	}
	return []clientv3.Cmp{clientv3.Compare(clientv3.ModRevision(b.opts.Namespace+streamOwnersPrefix), "<", rev+1).WithPrefix()}
}

// FollowStreamRecord calls fn with each new version of stream id's record
// after version (data nil once it is deleted), until ctx ends or fn
// returns false. A broken watch starts again from the last version seen;
// it returns why it could not (ctx's error at its end).
func (b *Backend) FollowStreamRecord(ctx context.Context, id string, version int64, fn func(data []byte, version int64) bool) error {
	key := b.streamKey(id)
	backoff := upstreamMinBackoff
	for ctx.Err() == nil {
		// The watches of every stream a gateway follows share one gRPC
		// stream to etcd: their contexts carry the same metadata.
		wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
		for resp := range b.cli.Watch(wctx, key, clientv3.WithRev(version+1)) {
			if err := b.watchFailure(&resp); err != nil {
				break
			}
			backoff = upstreamMinBackoff
			for _, ev := range resp.Events {
				version = ev.Kv.ModRevision
				var data []byte
				if ev.Type == clientv3.EventTypePut {
					data = ev.Kv.Value
				}
				if !fn(data, version) || data == nil {
					cancel()
					return nil
				}
			}
		}
		cancel()
		if ctx.Err() != nil {
			break
		}
		// Compacted past version, or etcd failed: read the record afresh.
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, upstreamMaxBackoff)
		data, v, err := b.StreamRecord(ctx, id)
		if err != nil {
			continue
		}
		if data == nil || v != version {
			if !fn(data, v) || data == nil {
				return nil
			}
			version = v
		}
	}
	return fmt.Errorf("etcd: following stream %s: %w", id, ctx.Err())
}
