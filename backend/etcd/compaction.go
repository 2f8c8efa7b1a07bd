package etcd

import (
	"context"
	"errors"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/httpkv/httpkv/kv"
)

// etcd reports that a revision is compacted, not up to where: its status
// has no compact revision. A watch from a compacted revision is the one
// answer that carries it, so the gateway learns it from there: from the
// watches it opens, and, when it must know, from a watch of a key no one
// writes (probeKey), opened for that purpose.

// probeKey is the key, outside the API's keys, that compaction probes
// watch. Nothing writes it.
func (b *Backend) probeKey() string { return b.opts.Namespace + probeName }

// probeName is the probe's key under the namespace.
const probeName = "probe"

// learnCompact records a compact revision etcd reported.
func (b *Backend) learnCompact(rev int64) {
	for {
		cur := b.compact.Load()
		if rev <= cur || b.compact.CompareAndSwap(cur, rev) {
			return
		}
	}
}

// Compact compacts etcd's history at rev (the whole cluster's: etcd
// compacts every namespace at once, so only a gateway that may, by
// clusterWide); with physical it returns once the space is reclaimed.
func (b *Backend) Compact(ctx context.Context, rev int64, physical bool) error {
	if err := b.clusterWide("compaction", "let etcd compact its history itself (--auto-compaction-mode and --auto-compaction-retention on its members)"); err != nil {
		return err
	}
	var opts []clientv3.CompactOption
	if physical {
		opts = append(opts, clientv3.WithCompactPhysical())
	}
	return b.call(ctx, func(ctx context.Context) error {
		resp, err := b.cli.Compact(ctx, rev, opts...)
		if err != nil {
			return err
		}
		b.saw(resp.Header.Revision)
		b.learnCompact(rev)
		return nil
	})
}

// compactRevision returns etcd's compact revision, asking it.
func (b *Backend) compactRevision(ctx context.Context) (int64, error) {
	return b.compactedBelow(ctx, max(b.compact.Load(), 1))
}

// compactedBelow returns etcd's compact revision if rev is below it, and
// the newest one the gateway knows of otherwise (which is then at most
// rev): a watch from rev either ends compacted, telling where, or
// catches up.
func (b *Backend) compactedBelow(ctx context.Context, rev int64) (int64, error) {
	ctx, stop, err := b.whileServing(ctx)
	if err != nil {
		return 0, err
	}
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, b.opts.RequestTimeout)
	defer cancel()
	err = b.historyReplay(ctx, "", b.probeKey(), "", rev, rev, replayOptions{}, func(*clientv3.Event) bool { return true })
	var ce *kv.CompactedError
	switch {
	case errors.As(err, &ce):
		return ce.CompactRevision, nil
	case errors.Is(err, context.DeadlineExceeded):
		return 0, mapErr(err)
	case err != nil:
		return 0, err
	}
	return b.compact.Load(), nil
}

// checkCompacted returns the compact revision as a read from rev must
// see it: the one the gateway knows if rev is below it; else, if a cheap
// read of the local member at rev says rev is compacted, etcd's, asked;
// else the one the gateway knows.
func (b *Backend) checkCompacted(ctx context.Context, rev int64) (int64, error) {
	if c := b.compact.Load(); rev < c {
		return c, nil
	}
	err := b.call(ctx, func(ctx context.Context) error {
		_, err := b.cli.Get(ctx, b.probeKey(), clientv3.WithRev(rev), clientv3.WithSerializable(), clientv3.WithCountOnly())
		return err
	})
	switch {
	case errors.Is(err, kv.ErrCompacted):
		var ce *kv.CompactedError
		if errors.As(err, &ce) && ce.CompactRevision > 0 {
			b.learnCompact(ce.CompactRevision)
		}
		return b.compact.Load(), nil
	case errors.Is(err, kv.ErrFutureRevision):
		// A member behind the others: it cannot tell, and rev is not
		// compacted on the others if it is not on it.
		return b.compact.Load(), nil
	}
	return b.compact.Load(), err
}
