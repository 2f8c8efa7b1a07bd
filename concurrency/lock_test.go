package concurrency_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/httpkv/httpkv/concurrency"
	"github.com/httpkv/httpkv/kv"
)

// lock is concurrency.Lock on the env's backend, failing the test on an
// error.
func (e *env) lock(tb testing.TB, name string, lease int64) concurrency.Held {
	tb.Helper()
	h, err := concurrency.Lock(context.Background(), e.b, []byte(name), lease, time.Minute)
	if err != nil {
		tb.Fatalf("Lock(%s, %x): %v", name, lease, err)
	}
	return h
}

func (e *env) unlock(tb testing.TB, name string, key []byte) int64 {
	tb.Helper()
	rev, err := concurrency.Unlock(context.Background(), e.b, []byte(name), key)
	if err != nil {
		tb.Fatalf("Unlock(%s, %s): %v", name, key, err)
	}
	return rev
}

// waitKeys waits until name has n keys: n-1 waiters queued behind a
// holder.
func (e *env) waitKeys(tb testing.TB, name string, n int) {
	tb.Helper()
	for deadline := time.Now().Add(time.Minute); len(e.keys(tb, name)) != n; {
		if time.Now().After(deadline) {
			tb.Fatalf("%s/ has %d keys, want %d", name, len(e.keys(tb, name)), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestLockUnlock(t *testing.T) {
	e := newEnv(t)
	id := e.grant(t, 60)
	h := e.lock(t, "jobs", id)
	if want := fmt.Sprintf("jobs/%x", id); string(h.Key) != want {
		t.Errorf("Lock(jobs, %x).Key = %q, want %q", id, h.Key, want)
	}
	kvs := e.keys(t, "jobs")
	if len(kvs) != 1 || !bytes.Equal(kvs[0].Key, h.Key) || kvs[0].Lease != id || h.Revision < kvs[0].CreateRevision {
		t.Fatalf("after Lock: keys %+v, held at %d; want only %s with lease %x", kvs, h.Revision, h.Key, id)
	}
	// The lease holds it already: asking again returns at once.
	again, err := concurrency.Lock(context.Background(), e.b, []byte("jobs"), id, 0)
	if err != nil || !bytes.Equal(again.Key, h.Key) {
		t.Fatalf("Lock again by the holder = %+v, %v; want %s at once", again, err, h.Key)
	}
	rev := e.unlock(t, "jobs", h.Key)
	if kvs := e.keys(t, "jobs"); len(kvs) != 0 || rev <= h.Revision {
		t.Fatalf("after Unlock (revision %d): keys %+v, want none", rev, kvs)
	}
	// Releasing again deletes nothing and makes no revision.
	if again := e.unlock(t, "jobs", h.Key); again != rev {
		t.Errorf("Unlock of a released key = revision %d, want %d (no write)", again, rev)
	}
}

func TestLockInvalid(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	id := e.grant(t, 60)
	cases := []struct {
		name string
		err  error
	}{
		{"empty name", func() error { _, err := concurrency.Lock(ctx, e.b, nil, id, 0); return err }()},
		{"no lease", func() error { _, err := concurrency.Lock(ctx, e.b, []byte("a"), 0, 0); return err }()},
		{"key of another lock", func() error { _, err := concurrency.Unlock(ctx, e.b, []byte("a"), []byte("b/1")); return err }()},
		{"the prefix alone", func() error { _, err := concurrency.Unlock(ctx, e.b, []byte("a"), []byte("a/")); return err }()},
	}
	for _, c := range cases {
		if !errors.Is(c.err, concurrency.ErrInvalid) {
			t.Errorf("%s: error %v, want ErrInvalid", c.name, c.err)
		}
	}
	if _, err := concurrency.Lock(ctx, e.b, []byte("a"), 12345, 0); !errors.Is(err, kv.ErrLeaseNotFound) {
		t.Errorf("Lock with an unknown lease: %v, want kv.ErrLeaseNotFound", err)
	}
	if kvs := e.keys(t, "a"); len(kvs) != 0 {
		t.Errorf("after the refused locks: keys %+v, want none", kvs)
	}
}

// hold is one holder's tenure, by revision.
type hold struct {
	who        int
	created    int64 // the create revision of its key
	held       int64 // the revision Lock returned
	marked     int64 // the revision of the key it wrote while holding
	released   int64 // the revision of its Unlock
	overlapped bool
}

// TestLockMutualExclusionFIFO queues 50 contenders behind a holder and
// lets the lock go round: no two tenures overlap in revision order, and
// they come in the order the contenders' keys were created.
func TestLockMutualExclusionFIFO(t *testing.T) {
	const contenders = 50
	e := newEnv(t)
	first := e.lock(t, "fifo", e.grant(t, 60))
	var (
		mu      sync.Mutex
		holds   []hold
		holding atomic.Int32
		wg      sync.WaitGroup
	)
	for i := range contenders {
		id := e.grant(t, 60)
		wg.Go(func() {
			h, err := concurrency.Lock(context.Background(), e.b, []byte("fifo"), id, time.Minute)
			if err != nil {
				t.Errorf("contender %d: Lock: %v", i, err)
				return
			}
			over := holding.Add(1) != 1
			own, err := e.b.Range(context.Background(), kv.RangeRequest{Key: h.Key})
			if err != nil || len(own.KVs) != 1 {
				t.Errorf("contender %d: reading its key %s: %+v, %v", i, h.Key, own.KVs, err)
				return
			}
			mark, err := e.kv.Put(context.Background(), kv.PutRequest{Key: fmt.Appendf(nil, "fifo-log/%d", i)}, nil)
			if err != nil {
				t.Errorf("contender %d: Put: %v", i, err)
			}
			marked := mark.Revision
			holding.Add(-1)
			released, err := concurrency.Unlock(context.Background(), e.b, []byte("fifo"), h.Key)
			if err != nil {
				t.Errorf("contender %d: Unlock: %v", i, err)
			}
			mu.Lock()
			holds = append(holds, hold{i, own.KVs[0].CreateRevision, h.Revision, marked, released, over})
			mu.Unlock()
		})
	}
	e.waitKeys(t, "fifo", contenders+1)
	firstReleased := e.unlock(t, "fifo", first.Key)
	wg.Wait()
	if len(holds) != contenders {
		t.Fatalf("%d contenders held the lock, want %d", len(holds), contenders)
	}
	slices.SortFunc(holds, func(a, b hold) int { return int(a.held - b.held) })
	prevReleased := firstReleased
	for i, h := range holds {
		if h.overlapped {
			t.Errorf("contender %d held the lock while another did", h.who)
		}
		if !(prevReleased <= h.held && h.held < h.marked && h.marked < h.released) {
			t.Errorf("tenure %d (contender %d): held at %d, marked %d, released %d; the one before released at %d",
				i, h.who, h.held, h.marked, h.released, prevReleased)
		}
		if i > 0 && h.created <= holds[i-1].created {
			t.Errorf("tenure %d (contender %d) has key created at %d, before the previous tenure's %d: not FIFO",
				i, h.who, h.created, holds[i-1].created)
		}
		prevReleased = h.released
	}
	if kvs := e.keys(t, "fifo"); len(kvs) != 0 {
		t.Errorf("after every release: keys %+v, want none", kvs)
	}
}

func TestLockTimeout(t *testing.T) {
	e := newEnv(t)
	holder := e.lock(t, "t", e.grant(t, 60))
	waiter := e.grant(t, 60)
	for _, timeout := range []time.Duration{0, 20 * time.Millisecond} {
		_, err := concurrency.Lock(context.Background(), e.b, []byte("t"), waiter, timeout)
		if !errors.Is(err, concurrency.ErrTimeout) {
			t.Fatalf("Lock(timeout %v) while held = %v, want ErrTimeout", timeout, err)
		}
		if kvs := e.keys(t, "t"); len(kvs) != 1 || !bytes.Equal(kvs[0].Key, holder.Key) {
			t.Fatalf("after a Lock timed out: keys %+v, want the holder's %s alone", kvs, holder.Key)
		}
	}
	// A zero timeout is a try: with the lock free, it takes it.
	e.unlock(t, "t", holder.Key)
	if _, err := concurrency.Lock(context.Background(), e.b, []byte("t"), waiter, 0); err != nil {
		t.Fatalf("Lock(timeout 0) of a free lock = %v, want it held", err)
	}
}

// TestLockCanceled is the client that disconnects: its waiting key goes.
func TestLockCanceled(t *testing.T) {
	e := newEnv(t)
	holder := e.lock(t, "c", e.grant(t, 60))
	ctx, cancel := context.WithCancel(context.Background())
	done := e.lockAsync(ctx, "c", e.grant(t, 60))
	e.waitKeys(t, "c", 2)
	cancel()
	if err := (<-done).err; !errors.Is(err, context.Canceled) {
		t.Fatalf("Lock after its context was canceled = %v, want context.Canceled", err)
	}
	if kvs := e.keys(t, "c"); len(kvs) != 1 || !bytes.Equal(kvs[0].Key, holder.Key) {
		t.Fatalf("after a waiter left: keys %+v, want the holder's %s alone", kvs, holder.Key)
	}
}

// TestLockWaiterLosesKey: a waiter whose key goes (lease revoked, or
// released by someone else) stops waiting at once, saying why.
func TestLockWaiterLosesKey(t *testing.T) {
	e := newEnv(t)
	e.lock(t, "l", e.grant(t, 60))
	for _, c := range []struct {
		name string
		take func(id int64, key []byte)
		want error
	}{
		{"lease revoked", func(id int64, _ []byte) {
			if err := e.revoke(id); err != nil {
				t.Fatal(err)
			}
		}, concurrency.ErrLeaseNotFound},
		{"key released", func(_ int64, key []byte) { e.unlock(t, "l", key) }, concurrency.ErrKeyDeleted},
	} {
		id := e.grant(t, 60)
		done := e.lockAsync(context.Background(), "l", id)
		e.waitKeys(t, "l", 2)
		c.take(id, concurrency.OwnerKey([]byte("l"), id))
		if err := (<-done).err; !errors.Is(err, c.want) {
			t.Errorf("%s: Lock = %v, want %v", c.name, err, c.want)
		}
	}
}

// TestLockMiddleWaiterLeaves: when the waiter in the middle leaves, the
// one behind it waits for the holder instead, and gets the lock when the
// holder releases.
func TestLockMiddleWaiterLeaves(t *testing.T) {
	e := newEnv(t)
	holder := e.lock(t, "m", e.grant(t, 60))
	middle := e.grant(t, 60)
	ctx, cancel := context.WithCancel(context.Background())
	left := e.lockAsync(ctx, "m", middle)
	e.waitKeys(t, "m", 2)
	last := e.lockAsync(context.Background(), "m", e.grant(t, 60))
	e.waitKeys(t, "m", 3)
	cancel()
	<-left
	e.waitKeys(t, "m", 2)
	select {
	case r := <-last:
		t.Fatalf("the last waiter got the lock (%+v, %v) while the holder held it", r.v, r.err)
	default:
	}
	released := e.unlock(t, "m", holder.Key)
	if r := <-last; r.err != nil || r.v.Revision < released {
		t.Fatalf("the last waiter = %+v, %v; want it held after the holder released at %d", r.v, r.err, released)
	}
}

// TestLockHandoverOnLeaseExpiry: a holder whose lease expires lets go
// within its TTL plus one expiry tick, in the bubble's time.
func TestLockHandoverOnLeaseExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		const ttl = 5 * time.Second
		crashed := e.grant(t, int64(ttl/time.Second))
		granted := time.Now()
		holder := e.lock(t, "x", crashed)
		next := e.lock(t, "x", e.grant(t, 60))
		if waited := time.Since(granted); waited < ttl || waited > ttl+checkInterval {
			t.Errorf("the next holder got the lock %v after the crashed holder's lease was granted, want within [%v, %v]",
				waited, ttl, ttl+checkInterval)
		}
		hist, err := e.b.Range(context.Background(), kv.RangeRequest{Key: holder.Key, Options: kv.RangeOptions{Revision: next.Revision}})
		if err != nil || len(hist.KVs) != 0 {
			t.Errorf("the crashed holder's key at the revision the next held (%d): %+v, %v; want it gone", next.Revision, hist.KVs, err)
		}
	})
}

// countingBackend counts the reads and records the watches that pass
// through it.
type countingBackend struct {
	concurrency.Backend
	ranges  atomic.Int64
	mu      sync.Mutex
	watches []kv.WatchRequest
}

func (c *countingBackend) Range(ctx context.Context, r kv.RangeRequest) (kv.RangeResult, error) {
	c.ranges.Add(1)
	return c.Backend.Range(ctx, r)
}

func (c *countingBackend) Watch(ctx context.Context, r kv.WatchRequest) (kv.WatchStream, error) {
	c.mu.Lock()
	c.watches = append(c.watches, r)
	c.mu.Unlock()
	return c.Backend.Watch(ctx, r)
}

// TestLockWakesOnlySuccessor: a queue of n waiters drains with O(n)
// reads, each waiter watching single keys only, never the prefix: a
// release wakes one waiter, not all.
func TestLockWakesOnlySuccessor(t *testing.T) {
	const waiters = 20
	e := newEnv(t)
	cb := &countingBackend{Backend: e.b}
	holder := e.lock(t, "w", e.grant(t, 60))
	var wg sync.WaitGroup
	for range waiters {
		id := e.grant(t, 60)
		wg.Go(func() {
			h, err := concurrency.Lock(context.Background(), cb, []byte("w"), id, time.Minute)
			if err != nil {
				t.Errorf("Lock: %v", err)
				return
			}
			if _, err := concurrency.Unlock(context.Background(), e.b, []byte("w"), h.Key); err != nil {
				t.Errorf("Unlock: %v", err)
			}
		})
	}
	e.waitKeys(t, "w", waiters+1)
	e.unlock(t, "w", holder.Key)
	wg.Wait()
	// Each waiter reads once on joining and once when its predecessor goes.
	if n := cb.ranges.Load(); n > 2*waiters {
		t.Errorf("%d waiters read the queue %d times, want at most %d", waiters, n, 2*waiters)
	}
	for _, w := range cb.watches {
		if w.End != nil {
			t.Errorf("a waiter watched the range [%q, %q), want single keys only", w.Key, w.End)
		}
	}
}

// cancelingBackend cancels a context on its nth read: the caller leaves
// at that very moment. firstRead is closed once the first read has
// answered.
type cancelingBackend struct {
	concurrency.Backend
	n         int64
	reads     atomic.Int64
	cancel    context.CancelFunc
	firstRead chan struct{}
}

func (c *cancelingBackend) Range(ctx context.Context, r kv.RangeRequest) (kv.RangeResult, error) {
	n := c.reads.Add(1)
	if n == c.n {
		c.cancel()
	}
	res, err := c.Backend.Range(ctx, r)
	if n == 1 {
		close(c.firstRead)
	}
	return res, err
}

// TestLockCallerLeavesAsTurnComes: a waiter whose client leaves just as
// its turn comes does not take the lock nobody would release.
func TestLockCallerLeavesAsTurnComes(t *testing.T) {
	e := newEnv(t)
	holder := e.lock(t, "turn", e.grant(t, 60))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The waiter's second read is the one after the holder let go: the
	// holder lets go once the waiter's first read has found it there.
	cb := &cancelingBackend{Backend: e.b, n: 2, cancel: cancel, firstRead: make(chan struct{})}
	waiter := e.grant(t, 60)
	done := async(func() (concurrency.Held, error) {
		return concurrency.Lock(ctx, cb, []byte("turn"), waiter, time.Minute)
	})
	<-cb.firstRead
	e.unlock(t, "turn", holder.Key)
	if r := <-done; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("Lock whose caller left as its turn came = %+v, %v; want context.Canceled", r.v, r.err)
	}
	if kvs := e.keys(t, "turn"); len(kvs) != 0 {
		t.Fatalf("after the waiter left: keys %+v, want none", kvs)
	}
}

// TestLockCheckLeases: with a lease guard on its txns, as the API sets
// for a caller who may not write everything, the put of a lock's key is
// checked, inside its write, against the keys its lease holds already; a
// refusal writes nothing.
func TestLockCheckLeases(t *testing.T) {
	e := newEnv(t)
	id := e.grant(t, 60)
	e.putLease(t, "elsewhere", id)
	refused := errors.New("may not write the lease's keys")
	var seen [][]byte
	cb := &backend{Backend: e.kv, guard: func(keys [][]byte) error { seen = keys; return refused }}
	if _, err := concurrency.Lock(context.Background(), cb, []byte("chk"), id, 0); !errors.Is(err, refused) {
		t.Fatalf("Lock with a lease holding a key the check refuses = %v, want the check's error", err)
	}
	if len(seen) != 1 || string(seen[0]) != "elsewhere" {
		t.Errorf("the check saw %q, want the lease's key elsewhere", seen)
	}
	if kvs := e.keys(t, "chk"); len(kvs) != 0 {
		t.Fatalf("after a refused lock: keys %+v, want none", kvs)
	}
	cb.guard = func([][]byte) error { return nil }
	if _, err := concurrency.Lock(context.Background(), cb, []byte("chk"), id, 0); err != nil {
		t.Fatalf("Lock with a check that allows = %v", err)
	}
}
