package etcd

import (
	"context"
	"errors"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/watch"
)

// catchUpTimeout bounds one read of history for the scheduler; a read
// that fails is tried again at the next sync pass.
const catchUpTimeout = 30 * time.Second

// Watch starts a watcher on the scheduler. A watch from now starts after
// etcd's current revision, read linearizably (currentRevision): the created
// message says the stream is consistent with that revision, and no read
// answered before the watch began may be ahead of it. The gateway's own
// revision (Rev) would not do: it follows etcd's only through the
// upstream watch, which hears of revisions outside the namespace at its
// next progress notification, seconds later. A watch from a revision the
// upstream watch has not reached yet, as a watch from now usually is,
// waits for it.
func (b *Backend) Watch(ctx context.Context, r kv.WatchRequest) (kv.WatchStream, error) {
	now := r.StartRevision == 0
	if now {
		rev, err := b.currentRevision(ctx)
		if err != nil {
			return nil, err
		}
		r.StartRevision = rev + 1
	}
	st, err := b.sched.Watch(r)
	if err != nil {
		return nil, err
	}
	for !now && st.Revision() < r.StartRevision && r.StartRevision <= b.Rev() {
		// The scheduler has not reached the watch's start, so it took the
		// watcher for synced and will never read the history that would
		// say it is compacted; yet etcd is past the start, and another
		// client of etcd may have compacted past it. Ask etcd; if so,
		// start the watch again once the scheduler has reached the
		// compact revision: its history read then ends it compacted.
		c, err := b.checkCompacted(ctx, r.StartRevision)
		if err != nil {
			st.Close()
			return nil, err
		}
		if r.StartRevision >= c {
			break
		}
		st.Close()
		b.up.waitFor(c)
		select {
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case <-time.After(5 * time.Millisecond):
		}
		if st, err = b.sched.Watch(r); err != nil {
			return nil, err
		}
	}
	// Ask etcd how far it has got only up to what the gateway knows it
	// reached: a watch from far in the future waits for its events
	// without the upstream watch polling for it.
	if _, end := b.win.bounds(); min(r.StartRevision-1, b.Rev()) > end {
		b.up.waitFor(min(r.StartRevision-1, b.Rev()))
	}
	if now {
		return nowStream{st, r.StartRevision - 1}, nil
	}
	return compactedAt{st, b}, nil
}

// compactedAt is a watch from a past revision. The scheduler says a
// watcher below the compact revision is compacted at the revision it
// has been notified of, which follows etcd's through the upstream watch
// and may lag it, even below the compact revision itself (etcd compacted
// at 6, at revision 7, the scheduler at 5). The compacted message then
// carries etcd's current revision, read once for it: as every answer,
// it is at the store's revision when it was served.
type compactedAt struct {
	*watch.Stream
	b *Backend
}

func (s compactedAt) Next() []kv.WatchResponse {
	rs := s.Stream.Next()
	for i := range rs {
		r := &rs[i]
		if r.CompactRevision == 0 {
			continue
		}
		rev := max(r.Revision, r.CompactRevision, s.b.Rev())
		ctx, cancel := context.WithTimeout(s.b.ctx, s.b.opts.RequestTimeout)
		if cur, err := s.b.currentRevision(ctx); err == nil {
			rev = max(rev, cur)
		}
		cancel()
		r.Revision = rev
	}
	return rs
}

// nowStream is a watch from now: it is consistent with the revision
// before its first, which the scheduler may not have reached yet.
type nowStream struct {
	*watch.Stream
	rev int64
}

func (s nowStream) Revision() int64 { return s.rev }

// history is where the scheduler catches watchers up from: the window,
// and etcd for what is older than the window.
type history struct{ b *Backend }

// ReadHistory reads revisions from to to: those older than the window
// from etcd, by a watch of their own (replay), the rest from the window.
// The compact revision it returns is etcd's as far as a read from from
// must know it (checkCompacted); a read below it starts there instead.
func (h history) ReadHistory(from, to int64, fn func(kv.Event) bool) (int64, error) {
	b := h.b
	ctx, cancel := context.WithTimeout(b.ctx, catchUpTimeout)
	defer cancel()
	compact, err := b.checkCompacted(ctx, from)
	if err != nil {
		return 0, err
	}
	from = max(from, compact)
	for from <= to {
		start, _ := b.win.bounds()
		if from < start {
			stopped := false
			err := b.replay(ctx, b.watcher, "\x00", "\x00", from, min(start-1, to), nil, func(e *clientv3.Event) bool {
				ev := toEvent(e)
				stopped = !fn(ev)
				return !stopped
			})
			var ce *kv.CompactedError
			if errors.As(err, &ce) {
				// Compacted meanwhile: the read starts over at the new
				// compact revision, for the watchers not below it.
				compact, from = ce.CompactRevision, ce.CompactRevision
				continue
			}
			if err != nil || stopped {
				return compact, err
			}
			from = start
			continue
		}
		if b.win.read(from, to, fn) {
			return compact, nil
		}
		// The window let from go meanwhile: read it from etcd.
	}
	return compact, nil
}

// FillPrevKVs gives each event the key's version before it: from the
// window, which holds what the upstream watch received with the event,
// or from etcd, by a read at the revision before.
func (h history) FillPrevKVs(events []*kv.Event) (int, error) {
	b := h.b
	for i, ev := range events {
		if prev, ok := b.win.prevKV(ev.KV.ModRevision, ev.KV.Key); ok {
			ev.PrevKV = prev
			continue
		}
		ctx, cancel := context.WithTimeout(b.ctx, catchUpTimeout)
		err := b.call(ctx, func(ctx context.Context) error {
			resp, err := b.kv.Get(ctx, string(ev.KV.Key), clientv3.WithRev(ev.KV.ModRevision-1))
			if err != nil {
				return err
			}
			ev.PrevKV = nil
			if len(resp.Kvs) == 1 {
				ev.PrevKV = toKVPtr(resp.Kvs[0])
			}
			return nil
		})
		cancel()
		if err != nil {
			return i, err
		}
	}
	return len(events), nil
}
