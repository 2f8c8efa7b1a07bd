package etcd

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/httpkv/httpkv/kv"
)

// freshness learns etcd's current revision for reads served from the
// cache, one linearizable read of etcd for every read that arrived
// while the previous one was under way: reads that come together cost
// etcd one small read together, as etcd itself batches ReadIndex.
//
// A read is linearizable when the revision it is answered at is one etcd
// reached after the read began; a check taken over after the read joined
// its batch (the next one to start) gives such a revision.
type freshness struct {
	mu sync.Mutex
	// next is the check the next round runs, joined by the reads that
	// arrive until it starts.
	next *revCheck
	wake chan struct{}
	// checks counts the rounds run.
	checks atomic.Int64
}

// revCheck is one round: done is closed once rev or err is set.
type revCheck struct {
	done chan struct{}
	rev  int64
	err  error
}

func newFreshness() *freshness { return &freshness{wake: make(chan struct{}, 1)} }

// join returns the check a read that begins now waits for.
func (f *freshness) join() *revCheck {
	f.mu.Lock()
	c := f.next
	if c == nil {
		c = &revCheck{done: make(chan struct{})}
		f.next = c
	}
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
	return c
}

// take returns the check to run now, nil when no read waits.
func (f *freshness) take() *revCheck {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.next
	f.next = nil
	return c
}

// run answers rounds of checks until the gateway closes; those waiting
// then end with the gateway's reason.
func (f *freshness) run(b *Backend) {
	defer b.wg.Done()
	for {
		select {
		case <-b.ctx.Done():
			if c := f.take(); c != nil {
				c.err = context.Cause(b.ctx)
				close(c.done)
			}
			return
		case <-f.wake:
		}
		c := f.take()
		if c == nil {
			continue
		}
		f.checks.Add(1)
		c.rev, c.err = b.currentRevision(b.ctx)
		close(c.done)
	}
}

// fresh returns a revision etcd reached after it was called.
func (b *Backend) fresh(ctx context.Context) (int64, error) {
	c := b.freshness.join()
	select {
	case <-c.done:
		return c.rev, c.err
	case <-ctx.Done():
		return 0, context.Cause(ctx)
	case <-b.ctx.Done():
		return 0, kv.Errorf(kv.ErrUnavailable, "the gateway is shutting down")
	}
}
