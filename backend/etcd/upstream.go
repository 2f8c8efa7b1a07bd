package etcd

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/httpkv/httpkv/kv"
)

// Backoff between two attempts of the upstream watch.
const (
	upstreamMinBackoff = 50 * time.Millisecond
	upstreamMaxBackoff = 2 * time.Second
)

// upstream is the gateway's one watch of etcd over its namespace. What
// it receives goes into the window, then to the scheduler, revision by
// revision: every watcher of the gateway is served from it. When it
// breaks (a member dies, loses its leader, or the network fails) it
// starts again from the revision after the last it saw, so that the
// scheduler sees every revision once, in order, only later.
type upstream struct {
	b *Backend
	// next is the first revision not yet received. Only run touches it.
	next int64
	// want is a revision some watcher waits for: while the window has not
	// reached it, the watch asks etcd for progress every progressRetry.
	want atomic.Int64
	kick chan struct{}
	// live is set while etcd has accepted the watch and it has not
	// broken: while it is not, the read cache falls behind, and reads
	// go to etcd rather than wait for it.
	live atomic.Bool
}

func newUpstream(b *Backend, next int64) *upstream {
	return &upstream{b: b, next: next, kick: make(chan struct{}, 1)}
}

// run watches until the gateway closes, starting again after each break.
func (u *upstream) run() {
	defer u.b.wg.Done()
	backoff := upstreamMinBackoff
	for {
		healthy, err := u.watch()
		if u.b.ctx.Err() != nil {
			return
		}
		u.b.onError(fmt.Errorf("etcd: the upstream watch broke at revision %d, resuming: %w", u.next, err))
		if healthy {
			backoff = upstreamMinBackoff
		}
		select {
		case <-u.b.ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, upstreamMaxBackoff)
	}
}

// waitFor asks the watch to reach rev soon: a watch from a revision the
// gateway has not seen yet waits for it, and etcd sends nothing while the
// namespace is idle unless asked.
func (u *upstream) waitFor(rev int64) {
	for {
		cur := u.want.Load()
		if rev <= cur || u.want.CompareAndSwap(cur, rev) {
			break
		}
	}
	select {
	case u.kick <- struct{}{}:
	default:
	}
}

// watch runs one etcd watch from u.next until it ends. healthy reports
// that etcd accepted it.
func (u *upstream) watch() (healthy bool, err error) {
	b := u.b
	// A member that loses its leader ends the watch, which then goes to
	// another member, rather than staying with one that hears nothing.
	ctx := clientv3.WithRequireLeader(b.ownStream(b.ctx))
	wch := b.watcher.Watch(ctx, "\x00", clientv3.WithFromKey(), clientv3.WithRev(u.next),
		clientv3.WithPrevKV(), clientv3.WithProgressNotify(), clientv3.WithCreatedNotify())
	defer u.live.Store(false)
	idle := time.NewTicker(b.opts.ProgressInterval)
	defer idle.Stop()
	retry := time.NewTicker(progressRetry)
	defer retry.Stop()
	for {
		select {
		case resp, ok := <-wch:
			if !ok {
				return healthy, errors.New("the watch channel closed")
			}
			if err := b.watchFailure(&resp); err != nil {
				if resp.CompactRevision != 0 {
					u.lost(resp.CompactRevision)
				}
				return healthy, err
			}
			switch {
			case resp.Created:
				healthy = true
				u.live.Store(true)
				_ = b.watcher.RequestProgress(ctx)
			case resp.IsProgressNotify():
				u.progress(resp.Header.Revision)
			default:
				u.events(resp.Events)
			}
		case <-idle.C:
			_ = b.watcher.RequestProgress(ctx)
		case <-retry.C:
			if _, end := b.win.bounds(); u.want.Load() > end {
				_ = b.watcher.RequestProgress(ctx)
			}
		case <-u.kick:
			_ = b.watcher.RequestProgress(ctx)
		case <-b.ctx.Done():
			return healthy, b.ctx.Err()
		}
	}
}

// events adds the events of one answer to the window and publishes them,
// one revision at a time (etcd never splits a revision between answers).
func (u *upstream) events(evs []*clientv3.Event) {
	var changes []kv.Changes
	for i := 0; i < len(evs); {
		rev := evs[i].Kv.ModRevision
		j := i
		for j < len(evs) && evs[j].Kv.ModRevision == rev {
			j++
		}
		if rev >= u.next {
			held := make([]kv.Event, j-i)
			published := make([]kv.Event, j-i)
			for k := range held {
				held[k] = toEvent(evs[i+k])
				published[k] = held[k]
				// Shared by every watcher: previous versions are given
				// to those that ask (FillPrevKVs), from the window.
				published[k].PrevKV = nil
			}
			u.b.win.add(rev, held)
			changes = append(changes, kv.Changes{Revision: rev, Events: published})
			u.next = rev + 1
		}
		i = j
	}
	if u.b.cache != nil {
		u.b.cache.apply(changes)
	}
	u.b.sched.Publish(changes)
}

// progress publishes a revision without events: etcd has sent every
// event up to rev.
func (u *upstream) progress(rev int64) {
	if rev < u.next {
		return
	}
	u.b.win.advance(rev)
	if u.b.cache != nil {
		u.b.cache.advance(rev)
	}
	u.b.sched.Publish([]kv.Changes{{Revision: rev}})
	u.next = rev + 1
}

// lost handles the watch finding its next revision compacted: the
// revisions from u.next up to compact are gone, so watchers that need
// them end with a compacted response, and the watch resumes from compact.
func (u *upstream) lost(compact int64) {
	b := u.b
	b.learnCompact(compact)
	b.saw(compact)
	b.win.restart(compact)
	if b.cache != nil {
		b.cache.drop()
	}
	b.sched.Lost(compact)
	b.onError(fmt.Errorf("etcd: the upstream watch lost revisions %d to %d to compaction", u.next, compact-1))
	u.next = compact
}
