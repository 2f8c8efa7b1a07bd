package etcd

import (
	"context"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/metadata"

	"github.com/httpkv/httpkv/kv"
)

// etcd has no read of past events but its watch: a watch from a past
// revision replays the history from there, then goes on live. replay
// uses one to read a span of history, and needs to know when it has all
// of it: etcd sends nothing for revisions without events, so replay asks
// for progress notifications, which etcd answers only once the watch has
// caught up (its "synced" group, etcd 3.4.31+, 3.5.13+), with the
// revision up to which it has sent everything. Until then etcd ignores
// the request, so replay asks again every progressRetry.

// progressRetry is how often a replay that has not heard how far it got
// asks again. etcd catches its unsynced watchers up every 100ms.
const progressRetry = 50 * time.Millisecond

// streamKey is the metadata that gives a watch a gRPC stream of its own:
// clientv3 shares one stream between the watches of equal metadata, and
// answers a progress request on a stream to every watch of it.
const streamKey = "httpkv-watch-stream"

// ownStream returns ctx with metadata no other watch of this client has.
func (b *Backend) ownStream(ctx context.Context) context.Context {
	return metadata.AppendToOutgoingContext(ctx, streamKey, strconv.FormatInt(b.streams.Add(1), 10))
}

// replay calls fn with the events of [key, end) (a single key when end
// is empty) at revisions from to to, in revision order, read from etcd by
// a watch of its own through w, until fn returns false. It returns nil
// once every event up to to has been offered, a *kv.CompactedError when
// from is below etcd's compact revision, or why the watch failed.
func (b *Backend) replay(ctx context.Context, w clientv3.Watcher, key, end string, from, to int64,
	opts []clientv3.OpOption, fn func(*clientv3.Event) bool) error {
	if to < from {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ctx = clientv3.WithRequireLeader(b.ownStream(ctx))
	opts = append(opts, clientv3.WithRev(from), clientv3.WithCreatedNotify())
	if end != "" {
		opts = append(opts, clientv3.WithRange(end))
	}
	wch := w.Watch(ctx, key, opts...)
	retry := time.NewTicker(progressRetry)
	defer retry.Stop()
	for {
		select {
		case resp, ok := <-wch:
			if !ok {
				if ctx.Err() != nil {
					return context.Cause(ctx)
				}
				return kv.Errorf(kv.ErrUnavailable, "etcd ended the watch; retry after Retry-After")
			}
			if err := b.watchFailure(&resp); err != nil {
				return err
			}
			if resp.Created {
				_ = w.RequestProgress(ctx)
				continue
			}
			if resp.IsProgressNotify() {
				if resp.Header.Revision >= to {
					return nil
				}
				continue
			}
			for _, ev := range resp.Events {
				if ev.Kv.ModRevision > to || !fn(ev) {
					return nil
				}
			}
			// etcd never splits a revision between two answers.
			if n := len(resp.Events); n > 0 && resp.Events[n-1].Kv.ModRevision == to {
				return nil
			}
		case <-retry.C:
			_ = w.RequestProgress(ctx)
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// errHistoryBusy answers a request that would open an etcd watch to read
// history while Options.MaxHistoryWatches are open.
var errHistoryBusy = kv.Errorf(kv.ErrHistoryBusy, "the gateway has as many etcd watches open to read history as it may")

// historyReplay is replayFragments for a request: one of the etcd
// watches requests may have open at once, or errHistoryBusy. (The watch
// scheduler's own reads of history, one at a time, take no token.)
func (b *Backend) historyReplay(ctx context.Context, prefix, key, end string, from, to int64,
	o replayOptions, fn func(*clientv3.Event) bool) error {
	select {
	case b.historyWatches <- struct{}{}:
	default:
		return errHistoryBusy
	}
	defer func() { <-b.historyWatches }()
	return b.replayFragments(ctx, prefix, key, end, from, to, o, fn)
}

// watchFailure returns why an answer of an etcd watch ends the watch: a
// *kv.CompactedError, its compact revision learned, or etcd's error as
// package kv's; nil for an answer to read. It records the answer's
// revision either way.
func (b *Backend) watchFailure(resp *clientv3.WatchResponse) error {
	// Even a compacted answer says how far etcd is: a watch from now
	// starts after it.
	b.saw(resp.Header.Revision)
	if resp.CompactRevision != 0 {
		b.learnCompact(resp.CompactRevision)
		return &kv.CompactedError{CompactRevision: resp.CompactRevision}
	}
	if err := resp.Err(); err != nil {
		return mapErr(err)
	}
	return nil
}
