package mvcc

import (
	"fmt"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
)

// CheckSpace refuses a write that adds cost bytes when the NOSPACE alarm
// is active, and raises the alarm when the write would exceed the quota.
// Puts and txns call it themselves; state kept beside the history (a lease
// grant) calls it before its UnsafePut.
func (t *WriteTxn) CheckSpace(cost int64) error {
	s := t.s
	if s.alarmNoSpace.Load() {
		return kv.ErrNoSpace
	}
	if cost == 0 {
		return nil
	}
	if size := s.dbSize.Load() + s.batchBytes; size+cost > s.opts.QuotaBytes {
		t.direct = true
		if err := putInt64(t.tx.Bucket(metaBucket), metaAlarmNoSpace, 1); err != nil {
			return err
		}
		s.alarmNoSpace.Store(true)
		t.mustCommit = true
		return fmt.Errorf("%w: backend size %d + %d bytes exceeds quota %d", kv.ErrNoSpace, size, cost, s.opts.QuotaBytes)
	}
	return nil
}

// Alarms returns the active alarms.
func (s *Store) Alarms() []kv.Alarm {
	if s.alarmNoSpace.Load() {
		return []kv.Alarm{kv.AlarmNoSpace}
	}
	return nil
}

// DisarmNoSpace clears the NOSPACE alarm. If the backend is still over its
// quota, the next write that adds data raises it again: reclaim space
// first (delete, compact, defrag).
func (s *Store) DisarmNoSpace() error {
	_, err := s.Write(func(tx *WriteTxn) error {
		if !s.alarmNoSpace.Load() {
			return nil
		}
		tx.direct = true
		if err := tx.tx.Bucket(metaBucket).Delete(metaAlarmNoSpace); err != nil {
			return err
		}
		tx.mustCommit = true
		// Writes are refused until the disarm is durable. (Raising the
		// alarm, in CheckSpace, takes effect at once instead: refusing
		// writes early is always safe.)
		tx.Stage(func() { s.alarmNoSpace.Store(false) }, nil)
		return nil
	})
	return err
}

// Stats are figures about the store for status pages and metrics.
type Stats struct {
	Revision        int64
	CompactRevision int64
	DBSize          int64 // bytes of the backend file in use by pages
	DBSizeInUse     int64 // DBSize less free pages
	Keys            int64 // live keys at Revision
	QuotaBytes      int64
}

// DBSize returns the backend's size and its size less free pages, as of
// the last commit, without walking the index as Stats does.
func (s *Store) DBSize() (size, inUse int64) {
	return s.dbSize.Load(), s.dbSizeInUse.Load()
}

// Stats returns current figures. Counting keys walks the index.
func (s *Store) Stats() Stats {
	rev := s.committedRev.Load()
	var keys int64
	s.index.visit(keyrange.All(), rev, func(keyRev) bool { keys++; return true })
	return Stats{
		Revision:        rev,
		CompactRevision: s.CompactRev(),
		DBSize:          s.dbSize.Load(),
		DBSizeInUse:     s.dbSizeInUse.Load(),
		Keys:            keys,
		QuotaBytes:      s.opts.QuotaBytes,
	}
}
