package lease

import (
	"errors"
	"fmt"
	"sync"

	"github.com/httpkv/httpkv/kv"
)

// RecordCost approximates the backend bytes one lease record takes: a
// grant is refused under the NOSPACE alarm, and raises it when the record
// would take the backend past its quota, as in etcd.
const RecordCost = 64

// revokeConcurrency is how many expired leases the manager revokes at
// once: submitted together, their writes share the store's commits (a
// batch of reports costs few fsyncs), while each revoke still deletes its
// keys at a revision of its own.
const revokeConcurrency = 64

// WriteTxn is the store write a grant or a revoke runs in (*mvcc.WriteTxn
// is one): the lease's record is written there, so it commits atomically
// with the rest of the write, a revoke's deletes share its one revision,
// and the change of memory is staged until the write is durable.
type WriteTxn interface {
	Txn
	// CheckSpace refuses a write that adds cost bytes under the NOSPACE
	// alarm, and raises the alarm when it would pass the quota.
	CheckSpace(cost int64) error
	// DeleteRange deletes keys, as a write of the store does: through the
	// write path whose commits reach watchers.
	DeleteRange(r kv.DeleteRequest) (kv.DeleteResult, error)
}

// Writer is the store's one write path, as the manager needs it (as etcd's
// lessor needs a RangeDeleter): Write runs fn in one durable write and
// returns its revision, or the current one when it wrote no key.
type Writer interface {
	Write(fn func(WriteTxn) error) (revision int64, err error)
}

// Manager owns the whole lease lifecycle over a store: grants (with the
// quota check), revokes (the keys and the record at one revision),
// keep-alives, reads, and the loop that revokes the leases its Lessor
// reports expired. All methods are safe for concurrent use.
type Manager struct {
	l       *Lessor
	w       Writer
	onError func(error)
	hooks   expiryHooks

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

// expiryHooks let tests see each batch of expired leases and each revoke
// of one.
type expiryHooks struct {
	batch   func(ids []int64)
	revoked func(id int64, err error)
}

// NewManager returns the manager of l's leases over w and starts the
// loop that revokes expired leases; onError, if not nil, receives the
// revokes that fail (other than for a lease already gone). Close stops
// the loop. l must be the Lessor the store tracks keys with.
func NewManager(l *Lessor, w Writer, onError func(error)) *Manager {
	return newManager(l, w, onError, expiryHooks{})
}

func newManager(l *Lessor, w Writer, onError func(error), hooks expiryHooks) *Manager {
	m := &Manager{
		l: l, w: w, onError: onError, hooks: hooks,
		stop: make(chan struct{}), done: make(chan struct{}),
	}
	go m.revokeExpired()
	return m
}

// Close stops the loop that revokes expired leases and waits for the
// revokes in flight. It is safe to call more than once; the other methods
// keep working.
func (m *Manager) Close() {
	m.closeOnce.Do(func() { close(m.stop) })
	<-m.done
}

// Grant grants a lease of ttl seconds (raised to MinTTL), with the ID id,
// or one the Lessor picks when id is 0, in one write of the store. It
// fails with kv.ErrNoSpace under the NOSPACE alarm, with kv.ErrLeaseExists
// when the ID is taken, with kv.ErrTooManyLeases past Config.MaxLeases,
// and with ErrInvalidTTL or ErrInvalidID.
func (m *Manager) Grant(id, ttl int64) (Lease, error) {
	var granted Lease
	_, err := m.w.Write(func(tx WriteTxn) error {
		if err := tx.CheckSpace(RecordCost); err != nil {
			return err
		}
		var err error
		granted, err = m.l.Grant(tx, id, ttl)
		return err
	})
	return granted, err
}

// Revoke deletes the lease's keys and its record in one write, so that
// the keys go at one revision, and returns that revision (the current one
// when the lease had no keys). allowed, if not nil, is asked inside that
// write with the keys about to go: its error revokes nothing, so no key
// attached meanwhile escapes the check. A lease that does not exist fails
// with kv.ErrLeaseNotFound.
func (m *Manager) Revoke(id int64, allowed func(keys [][]byte) error) (int64, error) {
	return m.revoke(id, false, allowed)
}

// revoke deletes the lease's keys and forgets it in one write. With
// onlyExpired, a lease that is no longer expired (a stale report, or an
// ID revoked and granted again since) is left alone.
func (m *Manager) revoke(id int64, onlyExpired bool, allowed func([][]byte) error) (int64, error) {
	return m.w.Write(func(tx WriteTxn) error {
		// As this write sees the lease: keys attached by earlier writes
		// of the same batch are deleted too.
		st, err := m.l.Status(tx, id)
		if err != nil {
			return err
		}
		if onlyExpired && st.Remaining > 0 {
			return nil
		}
		if allowed != nil {
			if err := allowed(st.Keys); err != nil {
				return err
			}
		}
		// The keys go first and the lease last: if a delete fails, the
		// store undoes the others and the lease stays.
		for _, k := range st.Keys {
			if _, err := tx.DeleteRange(kv.DeleteRequest{Key: k}); err != nil {
				return fmt.Errorf("lease: revoke %d: %w", id, err)
			}
		}
		return m.l.Revoke(tx, id)
	})
}

// KeepAlive renews the lease to its full TTL; see Lessor.KeepAlive.
func (m *Manager) KeepAlive(id int64) (int64, error) { return m.l.KeepAlive(id) }

// TimeToLive reports the lease; see Lessor.TimeToLive.
func (m *Manager) TimeToLive(id int64, withKeys bool) (Status, error) {
	return m.l.TimeToLive(id, withKeys)
}

// TimeToLiveKeys reports the lease with its keys, within limits; see
// Lessor.TimeToLiveKeys.
func (m *Manager) TimeToLiveKeys(id int64, limits *kv.ReadLimits) (Status, error) {
	return m.l.TimeToLiveKeys(id, limits)
}

// Leases returns the IDs of every lease, sorted.
func (m *Manager) Leases() []int64 { return m.l.Leases() }

// Page returns one page of the leases' IDs; see Lessor.Page.
func (m *Manager) Page(after int64, limit int) ([]int64, bool) { return m.l.Page(after, limit) }

// Count returns how many leases there are; see Lessor.Count.
func (m *Manager) Count() int { return m.l.Count() }

// Lookup reports whether the lease exists (expired and not yet revoked
// included).
func (m *Manager) Lookup(id int64) bool { return m.l.Lookup(id) }

// revokeExpired revokes the leases the Lessor reports expired until Close
// or the Lessor's Close. Each report's revokes are submitted together, so
// the store commits them in few fsyncs; the next report waits for them.
func (m *Manager) revokeExpired() {
	defer close(m.done)
	sem := make(chan struct{}, revokeConcurrency)
	for {
		var ids []int64
		select {
		case <-m.stop:
			return
		case batch, ok := <-m.l.Expired():
			if !ok {
				return
			}
			ids = batch
		}
		if m.hooks.batch != nil {
			m.hooks.batch(ids)
		}
		var wg sync.WaitGroup
		for _, id := range ids {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				_, err := m.revoke(id, true, nil)
				if m.hooks.revoked != nil {
					m.hooks.revoked(id, err)
				}
				if err != nil && !errors.Is(err, kv.ErrLeaseNotFound) && m.onError != nil {
					m.onError(fmt.Errorf("lease: revoking expired lease %d: %w", id, err))
				}
			})
		}
		wg.Wait()
	}
}
