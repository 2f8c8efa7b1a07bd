package lease

import (
	"bytes"
	"container/heap"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/google/btree"

	"github.com/httpkv/httpkv/kv"
)

// Limits of Grant.
const (
	// MinTTL is the shortest TTL, in seconds, a lease gets: Grant raises a
	// shorter one to it. It leaves a client that renews at a third of its
	// TTL (as etcd's clients do) more than a second between keep-alives,
	// room for a slow HTTP round trip, and keeps the expiry loop's 500 ms
	// granularity small beside the TTL.
	MinTTL int64 = 5
	// MaxTTL is the longest TTL, in seconds, Grant accepts (about 285
	// years, as in etcd): an expiry that far away still fits a
	// time.Duration.
	MaxTTL int64 = 9_000_000_000
	// MaxID is the largest lease ID, 2^53-1: the largest integer a JSON
	// number carries exactly to every client.
	MaxID = kv.MaxLeaseID
)

// Defaults for Config fields left zero.
const (
	DefaultCheckInterval = 500 * time.Millisecond
	DefaultRevokeRate    = 1000
	DefaultRetryInterval = 3 * time.Second
)

// Config configures a Lessor. The zero Config is ready to use.
type Config struct {
	// Now reads the clock every expiry is computed from. Nil means
	// time.Now. The expiry loop's ticker runs on the runtime's timers.
	Now func() time.Time
	// CheckInterval is how often the expiry loop looks for expired
	// leases. Zero means DefaultCheckInterval.
	CheckInterval time.Duration
	// RevokeRate bounds how many expired leases per second the loop
	// reports, so that a mass expiry is revoked over time instead of
	// filling the store's write queue at once. Zero means
	// DefaultRevokeRate.
	RevokeRate int
	// RetryInterval is how long a reported lease may stay unrevoked
	// before it is reported again. Zero means DefaultRetryInterval.
	RetryInterval time.Duration
	// MaxLeases bounds the leases alive at once: past it Grant fails
	// with kv.ErrTooManyLeases. Leases restored from the store count, but
	// are never refused. Zero means no bound.
	MaxLeases int
}

// Lease is a granted lease.
type Lease struct {
	ID  int64
	TTL int64 // granted time to live, in seconds
}

// Status is what TimeToLive reports of a lease.
type Status struct {
	Lease
	// Remaining is the time to live left, in seconds rounded up; 0 once
	// the lease has expired and waits to be revoked.
	Remaining int64
	// Keys are the attached keys, sorted; only when asked for.
	Keys [][]byte
}

// Txn is the store write a grant, a revoke or a look at a lease's keys
// runs in (*mvcc.WriteTxn): Grant and Revoke write the lease's record in
// it, so they commit atomically with the rest of that write, and stage
// the change of memory, which the store applies only once the write is
// durable (or undoes if it is not).
type Txn interface {
	UnsafePut(bucket, key, value []byte) error
	UnsafeDelete(bucket, key []byte) error
	// Stage registers apply, run once the write is committed, and undo,
	// run instead if it fails.
	Stage(apply, undo func())
	// LeaseKeys returns the keys attached to the lease as the write sees
	// them.
	LeaseKeys(id int64) ([][]byte, error)
}

// idsDegree is the degree of the B-tree of lease IDs.
const idsDegree = 32

// Lessor grants, renews, expires and revokes leases and tracks the keys
// attached to them. All methods are safe for concurrent use.
type Lessor struct {
	now      func() time.Time
	interval time.Duration
	perTick  int // leases reported per check at most
	perSec   int // expiries per second Restore schedules at most
	retry    time.Duration
	max      int // MaxLeases

	// mu guards the fields below. It is taken after any lock of the
	// caller (the store calls Lookup, Keys, Attach and Detach from its
	// committer goroutine) and nothing is called while holding it except
	// the Txn's UnsafePut and UnsafeDelete, which must not call back into
	// the Lessor.
	mu sync.RWMutex
	// leases are the leases of committed writes: what every reader sees.
	leases map[int64]*entry
	// ids are the IDs of leases, in order, for Page.
	ids  *btree.BTreeG[int64]
	heap expiryHeap
	// staged is the open write batch's view: the leases its writes granted
	// (an entry) or revoked (nil), not yet committed. Only the store's
	// committer reads it (Lookup, Status) and changes it (Grant, Revoke,
	// and the applies and undos they stage).
	staged map[int64]stagedLease
	seq    uint64 // numbers staged changes
	// stagedGrants counts the grants staged and not yet applied or
	// undone: with leases, what MaxLeases bounds.
	stagedGrants int
	// pending holds the keys Attach was given for IDs it did not know
	// before Restore: mvcc.Open reports leased keys before the records
	// are loaded. Restore hands them to their leases.
	pending  map[int64]map[string]struct{}
	restored bool

	expired   chan []int64
	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

// entry is one lease in memory.
type entry struct {
	id, ttl int64
	expiry  time.Time
	// check is when the expiry loop next looks at the lease: its expiry,
	// or once reported, when to report it again if it is still here.
	check time.Time
	index int                 // position in the heap
	keys  map[string]struct{} // attached keys; nil while there are none
}

// renew restarts the full TTL at now.
func (e *entry) renew(now time.Time) {
	e.expiry = now.Add(time.Duration(e.ttl) * time.Second)
	e.check = e.expiry
}

// sortedKeys returns copies of the attached keys, sorted, each charged to
// limits before it is copied (nil bounds nothing).
func (e *entry) sortedKeys(limits *kv.ReadLimits) ([][]byte, error) {
	keys := make([][]byte, 0, min(len(e.keys), maxKeysPrealloc))
	for k := range e.keys {
		if err := limits.Charge(len(k)); err != nil {
			return nil, err
		}
		keys = append(keys, []byte(k))
	}
	slices.SortFunc(keys, bytes.Compare)
	return keys, nil
}

// maxKeysPrealloc bounds what sortedKeys allocates before it has charged
// the keys.
const maxKeysPrealloc = 1024

// New returns a Lessor and starts its expiry loop; Close stops it. Call
// Restore once the store is open to load the persisted leases.
func New(cfg Config) *Lessor {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.CheckInterval <= 0 {
		cfg.CheckInterval = DefaultCheckInterval
	}
	if cfg.RevokeRate <= 0 {
		cfg.RevokeRate = DefaultRevokeRate
	}
	if cfg.RetryInterval <= 0 {
		cfg.RetryInterval = DefaultRetryInterval
	}
	l := &Lessor{
		now:      cfg.Now,
		interval: cfg.CheckInterval,
		perTick:  max(1, int(min(float64(cfg.RevokeRate)*cfg.CheckInterval.Seconds(), math.MaxInt32))),
		// Leave a quarter of the revoke rate for leases that expire
		// on their own while a restored crowd is being revoked.
		perSec:  max(1, cfg.RevokeRate-cfg.RevokeRate/4),
		retry:   cfg.RetryInterval,
		max:     cfg.MaxLeases,
		leases:  make(map[int64]*entry),
		ids:     btree.NewOrderedG[int64](idsDegree),
		staged:  make(map[int64]stagedLease),
		pending: make(map[int64]map[string]struct{}),
		// One batch waits while the consumer revokes the previous one;
		// the loop reports nothing more until it is taken.
		expired: make(chan []int64, 1),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	go l.run()
	return l
}

// Close stops the expiry loop, waits for it to return and closes the
// Expired channel. It is safe to call more than once. The other methods
// keep working.
func (l *Lessor) Close() {
	l.closeOnce.Do(func() { close(l.stop) })
	<-l.done
}

// Grant creates a lease with ttl seconds to live, raised to MinTTL, in
// the store write tx: it writes the lease's record there and stages the
// lease, which exists for later requests of the same batch at once and
// for everyone once the write is committed; its TTL counts from then. If
// the write fails, the lease was never granted. With id 0 the Lessor
// picks an unused random ID in [1, MaxID]; otherwise id is used, or
// kv.ErrLeaseExists if a lease has it. Past MaxLeases it fails with
// kv.ErrTooManyLeases.
func (l *Lessor) Grant(tx Txn, id, ttl int64) (Lease, error) {
	if ttl <= 0 || ttl > MaxTTL {
		return Lease{}, kv.Errorf(ErrInvalidTTL, "ttl must be 1 to %d seconds, not %d", MaxTTL, ttl)
	}
	if id < 0 || id > MaxID {
		return Lease{}, kv.Errorf(ErrInvalidID, "id must be 0 (let the server choose) or in [1, %d], not %d", MaxID, id)
	}
	ttl = max(ttl, MinTTL)

	l.mu.Lock()
	defer l.mu.Unlock()
	if l.max > 0 && len(l.leases)+l.stagedGrants >= l.max {
		return Lease{}, kv.Errorf(kv.ErrTooManyLeases, "%d leases are alive, as many as the server allows: revoke some, or wait for some to expire", l.max)
	}
	if id == 0 {
		id = l.unusedID()
	} else if l.exists(id) {
		return Lease{}, kv.Errorf(kv.ErrLeaseExists, "lease %d already exists: give another id, or 0 to let the server choose", id)
	}
	r := record{id: id, ttl: ttl}
	if err := tx.UnsafePut(bucketName, r.key(), r.value()); err != nil {
		return Lease{}, fmt.Errorf("lease: grant %d: %w", id, err)
	}
	e := &entry{id: id, ttl: ttl}
	l.stage(tx, id, e, func() {
		e.renew(l.now())
		heap.Push(&l.heap, e)
		l.leases[id] = e
		l.ids.ReplaceOrInsert(id)
	})
	return Lease{ID: id, TTL: ttl}, nil
}

// unusedID picks a random ID no lease has, committed or staged. With far
// fewer leases than MaxID the first pick almost always does.
func (l *Lessor) unusedID() int64 {
	for {
		id := rand.Int64N(MaxID) + 1
		if !l.exists(id) {
			return id
		}
	}
}

// Revoke deletes the lease's record in the store write tx and stages
// forgetting the lease: later requests of the batch no longer find it,
// and once the write is committed no one does. It does not delete the
// attached keys: the caller (Manager.Revoke) deletes them in the same
// write, before calling Revoke. Revoke of an unknown
// lease fails with kv.ErrLeaseNotFound and changes nothing.
func (l *Lessor) Revoke(tx Txn, id int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.exists(id) {
		return kv.LeaseNotFound(id)
	}
	if err := tx.UnsafeDelete(bucketName, record{id: id}.key()); err != nil {
		return fmt.Errorf("lease: revoke %d: %w", id, err)
	}
	l.stage(tx, id, nil, func() {
		if e, ok := l.leases[id]; ok {
			heap.Remove(&l.heap, e.index)
			delete(l.leases, id)
			l.ids.Delete(id)
		}
	})
	return nil
}

// KeepAlive renews the lease to its full TTL and returns that TTL. A
// lease that has expired cannot be renewed: it fails with kv.ErrLeaseNotFound even
// before it is revoked. The renewal is not persisted: after a restart
// every lease starts its full TTL anyway.
func (l *Lessor) KeepAlive(id int64) (ttl int64, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.leases[id]
	if !ok {
		return 0, kv.LeaseNotFound(id)
	}
	now := l.now()
	if !now.Before(e.expiry) {
		return 0, kv.LeaseNotFound(id)
	}
	e.renew(now)
	heap.Fix(&l.heap, e.index)
	return e.ttl, nil
}

// TimeToLive reports the lease's granted and remaining TTL and, if
// withKeys, its attached keys. An expired lease that is not yet revoked is
// reported with Remaining 0.
func (l *Lessor) TimeToLive(id int64, withKeys bool) (Status, error) {
	return l.timeToLive(id, withKeys, nil)
}

// TimeToLiveKeys is TimeToLive with the keys, each charged to limits as
// it is copied: a lease holding more than limits allow fails with their
// error (a *kv.TooLargeError, or Hold's) having copied no more.
func (l *Lessor) TimeToLiveKeys(id int64, limits *kv.ReadLimits) (Status, error) {
	return l.timeToLive(id, true, limits)
}

func (l *Lessor) timeToLive(id int64, withKeys bool, limits *kv.ReadLimits) (Status, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	e, ok := l.leases[id]
	if !ok {
		return Status{}, kv.LeaseNotFound(id)
	}
	st := Status{Lease: Lease{ID: id, TTL: e.ttl}, Remaining: ceilSeconds(e.expiry.Sub(l.now()))}
	if withKeys {
		var err error
		if st.Keys, err = e.sortedKeys(limits); err != nil {
			return Status{}, err
		}
	}
	return st, nil
}

// ceilSeconds rounds d up to whole seconds, and a negative d to 0.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}

// Page returns the IDs of at most limit leases above after, ascending,
// including expired ones not yet revoked, and whether more follow.
func (l *Lessor) Page(after int64, limit int) (ids []int64, more bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	ids = make([]int64, 0, min(limit, l.ids.Len()))
	l.ids.AscendGreaterOrEqual(after+1, func(id int64) bool {
		if len(ids) == limit {
			more = true
			return false
		}
		ids = append(ids, id)
		return true
	})
	return ids, more
}

// Count returns how many leases there are, expired ones not yet revoked
// included.
func (l *Lessor) Count() int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.leases)
}

// Leases returns the IDs of all leases, sorted, including expired ones not
// yet revoked.
func (l *Lessor) Leases() []int64 {
	l.mu.RLock()
	ids := make([]int64, 0, len(l.leases))
	for id := range l.leases {
		ids = append(ids, id)
	}
	l.mu.RUnlock()
	slices.Sort(ids)
	return ids
}
