package lease

import (
	"cmp"
	"container/heap"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
)

// ForEachFunc calls fn for every key and value in a bbolt bucket, as
// mvcc.ReadTxn.UnsafeForEach does; the slices are valid only during fn.
type ForEachFunc func(bucket []byte, fn func(k, v []byte) error) error

// errRestored is returned by a second Restore.
var errRestored = errors.New("lease: already restored")

// Restore loads the lease records through forEach and gives each lease its
// full TTL from now, spreading expiries so that no more than three
// quarters of RevokeRate fall in any second (see the package
// documentation). It hands the keys attached before it (by mvcc.Open) to
// their leases. A key attached to an ID with no record is an ErrCorrupt:
// a lease's keys are deleted in the write that deletes its record, so
// only an edited store has one. Call it once, after the store is open
// and before serving.
func (l *Lessor) Restore(forEach ForEachFunc) error {
	var recs []record
	err := forEach(bucketName, func(k, v []byte) error {
		r, err := decodeRecord(k, v)
		if err != nil {
			return err
		}
		recs = append(recs, r)
		return nil
	})
	if err != nil {
		return fmt.Errorf("lease: restore: %w", err)
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	if l.restored {
		return errRestored
	}
	if err := l.orphans(recs); err != nil {
		return fmt.Errorf("lease: restore: %w", err)
	}
	l.restored = true
	for _, e := range spread(recs, l.now(), l.perSec) {
		if _, ok := l.leases[e.id]; ok {
			continue // granted before Restore, so its record is this one
		}
		heap.Push(&l.heap, e)
		l.leases[e.id] = e
		l.ids.ReplaceOrInsert(e.id)
	}
	for id, keys := range l.pending {
		e, ok := l.leases[id]
		switch {
		case !ok:
			// Keys attached and all detached again: none left.
		case e.keys == nil:
			e.keys = keys
		default:
			maps.Copy(e.keys, keys)
		}
	}
	l.pending = nil
	return nil
}

// orphans says which key attached before Restore is attached to a lease
// that neither has a record in recs nor was granted since, if any.
func (l *Lessor) orphans(recs []record) error {
	if len(l.pending) == 0 {
		return nil
	}
	ids := make(map[int64]bool, len(recs))
	for _, r := range recs {
		ids[r.id] = true
	}
	for id, keys := range l.pending {
		if _, granted := l.leases[id]; !ids[id] && !granted && len(keys) > 0 {
			for k := range keys {
				return fmt.Errorf("%w: the key %q is attached to lease %d, which does not exist", ErrCorrupt, k, id)
			}
		}
	}
	return nil
}

// spread makes an entry of each record, expiring its full TTL after now,
// or later where needed so that consecutive expiries are at least
// 1s/perSec apart: any second then holds at most perSec of them.
//
// For example, with perSec 2 and TTLs 5, 5, 5 and 9 restored at t, the
// expiries are t+5s, t+5.5s, t+6s and t+9s.
func spread(recs []record, now time.Time, perSec int) []*entry {
	slices.SortFunc(recs, func(a, b record) int {
		return cmp.Or(cmp.Compare(a.ttl, b.ttl), cmp.Compare(a.id, b.id))
	})
	// Rounded up: perSec gaps must span a whole second.
	gap := (time.Second + time.Duration(perSec) - 1) / time.Duration(perSec)
	entries := make([]*entry, len(recs))
	var last time.Time
	for i, r := range recs {
		e := &entry{id: r.id, ttl: max(r.ttl, MinTTL)}
		e.renew(now)
		if i > 0 && e.expiry.Before(last.Add(gap)) {
			e.expiry = last.Add(gap)
			e.check = e.expiry
		}
		last = e.expiry
		entries[i] = e
	}
	return entries
}
