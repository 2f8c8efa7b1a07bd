package etcd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/btree"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/httpkv/httpkv/kv"
)

// readCache holds every key of the namespace as of one revision, kept
// current by the upstream watch, so that a gateway answers a read at the
// current revision from memory once etcd has said how far it is
// (freshness.go): kube-apiserver serves consistent reads from its watch
// cache so. Reads then scale with gateways, and cost etcd one small
// linearizable read per batch of them instead of a range each.
//
// It is built by listing the namespace at one revision, then applying
// the window's events after it; from then on the upstream watch applies
// each revision it receives, after adding it to the window. It is
// dropped, and built again, when the upstream watch loses revisions to
// compaction; and dropped for good (reads go to etcd) when the namespace
// outgrows its bound in bytes.
type readCache struct {
	limit int64 // bytes; the cache's keys and values, each with entryOverhead
	// onError is told when the cache is dropped for good.
	onError func(error)

	mu sync.RWMutex
	// keys is nil while the cache is not ready. Only the upstream watch
	// (apply) changes it, holding mu.
	keys *btree.BTreeG[*kv.KeyValue]
	// snap, when not nil, is a clone of keys as they are, which nothing
	// changes: reads walk it without holding mu, so that a long read
	// never holds up the upstream watch (and every watcher behind it).
	// A read takes it when apply has changed keys since (a clone is
	// lazy: apply then copies the nodes it changes).
	snap *btree.BTreeG[*kv.KeyValue]
	// rev: every event of the namespace up to rev is applied to keys.
	rev  int64
	size int64
	// moved is closed, and replaced, when rev moves or the cache is
	// dropped: readers waiting for a revision wait on it.
	moved chan struct{}
	// tooLarge records that the namespace outgrew limit: the cache is not
	// built again.
	tooLarge bool

	// build asks the builder (run) to build the cache.
	build chan struct{}
	// served counts the reads answered.
	served atomic.Int64
}

// entryOverhead is what a cached key counts for beyond its key and value
// bytes: the KeyValue and its place in the tree.
const entryOverhead = 96

// A build lists the namespace in pages, the first of firstListKeys
// keys, the next of as many as about listPageBytes holds at the sizes
// seen, at most maxListKeys: etcd counts the rest of the range for each
// page, so a namespace of n keys in pages of p costs etcd n²/2p keys
// visited, and pages are made large where their bytes allow.
const (
	firstListKeys = 256
	maxListKeys   = 16384
	listPageBytes = 4 << 20
)

// cacheMaxBackoff bounds the wait between two builds that failed: a
// build lists the whole namespace, which etcd should not be asked for
// often when writes keep outrunning the window while it lists.
const cacheMaxBackoff = 30 * time.Second

func entrySize(e *kv.KeyValue) int64 { return int64(len(e.Key)+len(e.Value)) + entryOverhead }

func keyLess(a, b *kv.KeyValue) bool { return bytes.Compare(a.Key, b.Key) < 0 }

func newReadCache(limit int64, onError func(error)) *readCache {
	c := &readCache{limit: limit, onError: onError, moved: make(chan struct{}), build: make(chan struct{}, 1)}
	c.build <- struct{}{}
	return c
}

// run builds the cache whenever it is asked to, until the gateway
// closes, retrying a build that fails.
func (c *readCache) run(b *Backend) {
	defer b.wg.Done()
	for {
		select {
		case <-b.ctx.Done():
			return
		case <-c.build:
		}
		for backoff := upstreamMinBackoff; ; backoff = min(2*backoff, cacheMaxBackoff) {
			err := c.fill(b)
			if err == nil || b.ctx.Err() != nil {
				break
			}
			if errors.Is(err, errCacheTooLarge) {
				c.onError(c.outgrown())
				break
			}
			b.onError(fmt.Errorf("etcd: building the read cache: %w", err))
			select {
			case <-b.ctx.Done():
				return
			case <-time.After(backoff):
			}
		}
	}
}

var (
	errCacheTooLarge = errors.New("the namespace outgrew the read cache")
	errWindowPassed  = errors.New("the window no longer holds the revisions after the list")
)

// fill lists the namespace at one revision, then, holding the cache,
// applies the window's events after that revision and makes the cache
// ready. Revisions the upstream watch adds to the window afterwards reach
// the cache through apply, which waits for the cache: none is missed.
func (c *readCache) fill(b *Backend) error {
	keys := btree.NewG(32, keyLess)
	var size, rev int64
	from := "\x00"
	ask := int64(firstListKeys)
	for {
		var page *clientv3.GetResponse
		err := b.call(b.ctx, func(ctx context.Context) error {
			opts := []clientv3.OpOption{clientv3.WithFromKey(), clientv3.WithLimit(ask)}
			if rev != 0 {
				opts = append(opts, clientv3.WithRev(rev))
			}
			var err error
			page, err = b.kv.Get(ctx, from, opts...)
			return err
		})
		if err != nil {
			return err
		}
		if rev == 0 {
			rev = page.Header.Revision
		}
		for _, p := range page.Kvs {
			e := toKV(p)
			size += entrySize(&e)
			if size > c.limit {
				c.mu.Lock()
				c.tooLarge = true
				c.mu.Unlock()
				return errCacheTooLarge
			}
			keys.ReplaceOrInsert(&e)
		}
		if !page.More || len(page.Kvs) == 0 {
			break
		}
		from = string(page.Kvs[len(page.Kvs)-1].Key) + "\x00"
		ask = min(max(listPageBytes*int64(keys.Len())/max(size, 1), firstListKeys), maxListKeys)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, end := b.win.bounds()
	held := b.win.read(rev+1, end, func(ev kv.Event) bool {
		size += applyEvent(keys, &ev)
		return true
	})
	if !held {
		return errWindowPassed
	}
	if size > c.limit {
		c.tooLarge = true
		return errCacheTooLarge
	}
	c.keys, c.snap, c.size, c.rev = keys, nil, size, max(rev, end)
	// A drop asked for while this build ran is answered by it: the
	// window held every revision after the list.
	select {
	case <-c.build:
	default:
	}
	c.wake()
	return nil
}

// applyEvent applies ev to keys and returns how the keys' size changed.
// The event's key and value are shared, never changed: the window and
// the watchers hold them too.
func applyEvent(keys *btree.BTreeG[*kv.KeyValue], ev *kv.Event) int64 {
	var grown int64
	if ev.Type == kv.EventPut {
		e := ev.KV
		grown += entrySize(&e)
		if old, ok := keys.ReplaceOrInsert(&e); ok {
			grown -= entrySize(old)
		}
		return grown
	}
	if old, ok := keys.Delete(&kv.KeyValue{Key: ev.KV.Key}); ok {
		grown -= entrySize(old)
	}
	return grown
}

// apply applies the revisions the upstream watch received, in order.
func (c *readCache) apply(changes []kv.Changes) {
	if len(changes) == 0 {
		return
	}
	if err := c.applyLocked(changes); err != nil {
		c.onError(err)
	}
}

func (c *readCache) applyLocked(changes []kv.Changes) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.keys == nil || changes[len(changes)-1].Revision <= c.rev {
		return nil
	}
	for _, ch := range changes {
		if ch.Revision <= c.rev {
			continue
		}
		for i := range ch.Events {
			c.size += applyEvent(c.keys, &ch.Events[i])
		}
		c.rev = ch.Revision
	}
	c.snap = nil
	if c.size > c.limit {
		c.tooLarge = true
		c.dropLocked()
		return c.outgrown()
	}
	c.wake()
	return nil
}

// outgrown is the error that says the namespace outgrew the cache, for
// good.
func (c *readCache) outgrown() error {
	return fmt.Errorf("etcd: the namespace outgrew the read cache's bound of %d bytes (each key counting %d more than its key and value): reads go to etcd until the gateway restarts", c.limit, entryOverhead)
}

// advance records that no event of the namespace lies before rev.
func (c *readCache) advance(rev int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.keys != nil && rev > c.rev {
		c.rev = rev
		c.wake()
	}
}

// drop empties the cache and has it built again: the upstream watch lost
// revisions.
func (c *readCache) drop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropLocked()
	if !c.tooLarge {
		select {
		case c.build <- struct{}{}:
		default:
		}
	}
}

func (c *readCache) dropLocked() {
	c.keys, c.snap, c.size, c.rev = nil, nil, 0, 0
	c.wake()
}

// wake tells the readers waiting for a revision that rev moved. The
// caller holds mu.
func (c *readCache) wake() {
	close(c.moved)
	c.moved = make(chan struct{})
}

// cacheWait bounds how long a read waits for the cache to reach the
// revision etcd named before it reads etcd instead.
const cacheWait = 500 * time.Millisecond

// rangeAt answers r from the cache once the cache has reached rev, and
// reports whether it did: it does not while it is not ready, nor when it
// has not reached rev within wait (or ctx ended). rev is a revision etcd
// named after the read began; the answer is of the cache's revision then,
// rev or a later one.
func (c *readCache) rangeAt(ctx context.Context, rev int64, r *kv.RangeRequest, win *window, wait time.Duration) (kv.RangeResult, bool, error) {
	var timeout <-chan time.Time
	for {
		c.mu.RLock()
		ready, cur, moved := c.keys != nil, c.rev, c.moved
		c.mu.RUnlock()
		if !ready {
			return kv.RangeResult{}, false, nil
		}
		if cur >= rev {
			keys, cur := c.snapshot()
			if keys == nil || cur < rev {
				return kv.RangeResult{}, false, nil // dropped meanwhile
			}
			res, ok, err := selectAt(keys, cur, r, win)
			if ok {
				c.served.Add(1)
			}
			return res, ok, err
		}
		if timeout == nil {
			t := time.NewTimer(wait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-moved:
		case <-timeout:
			return kv.RangeResult{}, false, nil
		case <-ctx.Done():
			return kv.RangeResult{}, false, nil
		}
	}
}

// snapshot returns the keys as they are, in a tree nothing changes, and
// their revision; nil when the cache is not ready.
func (c *readCache) snapshot() (*btree.BTreeG[*kv.KeyValue], int64) {
	c.mu.RLock()
	snap, rev := c.snap, c.rev
	c.mu.RUnlock()
	if snap != nil {
		return snap, rev
	}
	// A clone changes the tree's copy-on-write marks: one at a time.
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.keys == nil {
		return nil, 0
	}
	if c.snap == nil {
		c.snap = c.keys.Clone()
	}
	return c.snap, c.rev
}

// selectAt answers r from keys, the namespace at revision cur, or, for a
// read at a past revision, as the window says the keys were then; it
// reports false when it cannot tell (pastWalk).
func selectAt(keys *btree.BTreeG[*kv.KeyValue], cur int64, r *kv.RangeRequest, win *window) (kv.RangeResult, bool, error) {
	walk := func(visit func(*kv.KeyValue) bool) { walkRange(keys, r.Key, r.End, visit) }
	if at := r.Options.Revision; at != 0 && at < cur {
		past, ok := pastWalk(keys, win, at, cur, r)
		if !ok {
			return kv.RangeResult{}, false, nil
		}
		walk = past
	}
	res, err := selectRange(walk, cur, r)
	return res, true, err
}

// ready reports whether the cache can answer reads.
func (c *readCache) ready() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.keys != nil
}

// stats returns the keys and bytes held.
func (c *readCache) stats() (keys int, size int64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.keys == nil {
		return 0, 0
	}
	return c.keys.Len(), c.size
}

// rangeFromCache answers a range from the cache, once the cache has
// reached a revision etcd reached after the call began, and reports
// whether it did: otherwise the range is read from etcd. A range at a
// past revision asks etcd on its own, at that revision, so that it fails
// as etcd's read would (compacted, or in the future), and is answered
// while the window still holds the revisions after it.
func (b *Backend) rangeFromCache(ctx context.Context, r *kv.RangeRequest) (kv.RangeResult, bool, error) {
	if b.cache == nil || !b.up.live.Load() || !b.cache.ready() {
		return kv.RangeResult{}, false, nil
	}
	var rev int64
	var err error
	if at := r.Options.Revision; at == 0 {
		rev, err = b.fresh(ctx)
	} else {
		rev, err = b.revisionAt(ctx, at)
	}
	if err != nil {
		return kv.RangeResult{}, true, err
	}
	if _, end := b.win.bounds(); end < rev {
		b.up.waitFor(rev)
	}
	res, ok, err := b.cache.rangeAt(ctx, rev, r, b.win, cacheWait)
	if ok && err == nil {
		b.reached(res.Revision)
	}
	return res, ok, err
}

// currentRevision reads etcd's revision now: a linearizable read, so at
// least that of every change etcd had made when it was asked.
func (b *Backend) currentRevision(ctx context.Context) (int64, error) {
	return b.revisionAt(ctx, 0)
}

// revisionAt reads etcd's current revision with a linearizable read at
// revision at (0: the current one), which fails as any read at at would
// (compacted, or in the future).
func (b *Backend) revisionAt(ctx context.Context, at int64) (int64, error) {
	var rev int64
	err := b.call(ctx, func(ctx context.Context) error {
		resp, err := b.cli.Get(ctx, b.probeKey(), clientv3.WithRev(at), clientv3.WithCountOnly())
		if err != nil {
			return err
		}
		rev = resp.Header.Revision
		b.saw(rev)
		return nil
	})
	return rev, err
}
