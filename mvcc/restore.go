package mvcc

import (
	"fmt"

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
		}
		for _, ki := range cache {
			s.index.insertRestored(ki)
		}
		if s.opts.Lessor == nil {
			return nil
		}
		// Attach every live leased key to its lease.
		b := tx.Bucket(keyBucket)
		for _, ki := range cache {
			mod, _, _, err := ki.get(s.currentRev)
			if err != nil {
				continue
			}
			rec, err := decodeKeyValue(b.Get(revBytes(mod, false)))
			if err != nil {
				return err
			}
			if rec.Lease != 0 {
				leased = append(leased, rec)
			}
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
