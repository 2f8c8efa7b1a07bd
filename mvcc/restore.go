package mvcc

import (
	"bytes"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/httpkv/httpkv/kv"
)

// restore rebuilds the index, the revisions and the alarm from the file. It
// returns the revision of an unfinished compaction, or 0.
func (s *Store) restore() (unfinishedCompact int64, err error) {
	var leased []kv.KeyValue
	err = s.db.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(metaBucket)
		scheduled := readInt64(meta, metaScheduledCompact)
		finished := readInt64(meta, metaFinishedCompact)
		s.alarmNoSpace.Store(meta.Get(metaAlarmNoSpace) != nil)
		if scheduled > finished {
			unfinishedCompact = scheduled
		}
		var err error
		if s.currentRev, s.compactRev, err = storedRevisions(tx); err != nil {
			return err
		}

		cache := make(map[string]*keyIndex)
		// The lease of each key's newest put, while the key lives: read
		// from the records as they go by, in revision order, so that no
		// key's record is read again to find it.
		leaseOf := make(map[*keyIndex]int64)
		c := tx.Bucket(keyBucket).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			rev, tomb, err := parseRevBytes(k)
			if err != nil {
				return err
			}
			hdr, _, err := decodeHeader(v)
			if err != nil {
				return fmt.Errorf("revision %v: %w", rev, err)
			}
			ki, ok := cache[string(hdr.key)]
			switch {
			case ok && tomb:
				if err := ki.tombstone(rev); err != nil {
					// A tombstone for a generation that recovery never saw
					// begin: its puts were compacted; start afresh.
					ki.restoreTombstone(rev)
				}
			case ok:
				g := &ki.generations[len(ki.generations)-1]
				began := g.isEmpty()
				ki.put(rev)
				if began {
					// The record knows its generation's creation and
					// version even if earlier puts were compacted.
					g.created, g.ver = kv.Revision{Main: hdr.create}, hdr.version
				}
			default:
				ki = &keyIndex{key: append([]byte(nil), hdr.key...)}
				if tomb {
					ki.restoreTombstone(rev)
				} else {
					ki.restore(kv.Revision{Main: hdr.create}, rev, hdr.version)
				}
				cache[string(ki.key)] = ki
			}
			if tomb || hdr.lease == 0 {
				delete(leaseOf, ki)
			} else {
				leaseOf[ki] = hdr.lease
			}
		}
		// In key order: the tree's inserts then each go down the same
		// path as the one before, which its caches still hold.
		restored := make([]*keyIndex, 0, len(cache))
		for _, ki := range cache {
			restored = append(restored, ki)
		}
		slices.SortFunc(restored, func(a, b *keyIndex) int { return bytes.Compare(a.key, b.key) })
		for _, ki := range restored {
			s.index.insertRestored(ki)
		}
		if s.opts.Lessor == nil {
			return nil
		}
		// Attach every live leased key to its lease.
		for ki, id := range leaseOf {
			leased = append(leased, kv.KeyValue{Key: ki.key, Lease: id})
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("mvcc: recover %s: %w", s.path, err)
	}
	for _, rec := range leased {
		s.opts.Lessor.Attach(rec.Lease, rec.Key)
	}
	s.committedRev.Store(s.currentRev)
	return unfinishedCompact, nil
}

// storedRevisions reads the revision and the compact revision of the
// state in tx: the newest revision in the history, but not below the
// compact revision, and at least 1 (the empty store's).
func storedRevisions(tx *bolt.Tx) (rev, compactRev int64, err error) {
	meta := tx.Bucket(metaBucket)
	compactRev = max(readInt64(meta, metaScheduledCompact), readInt64(meta, metaFinishedCompact))
	rev = max(compactRev, 1)
	if k, _ := tx.Bucket(keyBucket).Cursor().Last(); k != nil {
		last, _, err := parseRevBytes(k)
		if err != nil {
			return 0, 0, err
		}
		rev = max(rev, last.Main)
	}
	return rev, compactRev, nil
}
