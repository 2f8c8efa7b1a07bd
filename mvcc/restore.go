package mvcc

import (
	"bytes"
	"fmt"
	"slices"
	"sync"
	"unsafe"

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
		var b indexBuilder
		if err := b.build(tx); err != nil {
			return err
		}
		s.index.insertRestored(b.sorted())
		if s.opts.Lessor == nil {
			return nil
		}
		// Attach every live leased key to its lease.
		for ki, id := range b.leaseOf {
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

// scannedRecord is one history record as the restore's scan decodes it;
// its header's key aliases the read transaction's pages.
type scannedRecord struct {
	rev  kv.Revision
	tomb bool
	hdr  recordHeader
}

const (
	// restoreBatchLen is how many records the scan hands the builder at
	// a time, and restoreBatches how many batches are in flight: enough
	// that neither side waits on the other for long, few enough to stay
	// in the caches.
	restoreBatchLen = 4096
	restoreBatches  = 4
	// parallelSortMin is the number of keys from which the restore sorts
	// two halves at once and merges them.
	parallelSortMin = 1 << 15
)

// indexBuilder rebuilds each key's index from the history, record by
// record in revision order.
type indexBuilder struct {
	// byKey holds every key's index, by its key. The map's string keys
	// alias the keyIndex's own key bytes, which never change, so a key is
	// copied once.
	byKey map[string]*keyIndex
	// leaseOf is the lease of each key's newest put, while the key lives:
	// read from the records as they go by, so that no key's record is
	// read again to find it.
	leaseOf map[*keyIndex]int64
}

// build reads every record of the history in tx into the builder. This
// goroutine reads and decodes the records while a second one adds them to
// the keys' indexes, so that a restart takes about the longer of the two,
// not their sum. The second one is done when build returns, before tx
// (whose pages the records alias) can end.
func (b *indexBuilder) build(tx *bolt.Tx) error {
	b.byKey = make(map[string]*keyIndex)
	b.leaseOf = make(map[*keyIndex]int64)
	full := make(chan []scannedRecord, restoreBatches)
	free := make(chan []scannedRecord, restoreBatches)
	for range restoreBatches {
		free <- make([]scannedRecord, 0, restoreBatchLen)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for batch := range full {
			for i := range batch {
				b.add(&batch[i])
			}
			free <- batch[:0]
		}
	}()
	err := scanHistory(tx, full, free)
	close(full)
	<-done
	return err
}

// scanHistory decodes the records of the history in revision order and
// sends them in batches to full, taking empty batches from free.
func scanHistory(tx *bolt.Tx, full chan<- []scannedRecord, free <-chan []scannedRecord) error {
	batch := <-free
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
		batch = append(batch, scannedRecord{rev: rev, tomb: tomb, hdr: hdr})
		if len(batch) == cap(batch) {
			full <- batch
			batch = <-free
		}
	}
	if len(batch) > 0 {
		full <- batch
	}
	return nil
}

// add applies one record, the newest so far, to its key's index.
func (b *indexBuilder) add(r *scannedRecord) {
	ki, ok := b.byKey[string(r.hdr.key)]
	switch {
	case ok && r.tomb:
		if err := ki.tombstone(r.rev); err != nil {
			// A tombstone for a generation that recovery never saw
			// begin: its puts were compacted; start afresh.
			ki.restoreTombstone(r.rev)
		}
	case ok:
		g := &ki.generations[len(ki.generations)-1]
		began := g.isEmpty()
		ki.put(r.rev)
		if began {
			// The record knows its generation's creation and version
			// even if earlier puts were compacted.
			g.created, g.ver = kv.Revision{Main: r.hdr.create}, r.hdr.version
		}
	default:
		ki = &keyIndex{key: bytes.Clone(r.hdr.key)}
		if r.tomb {
			ki.restoreTombstone(r.rev)
		} else {
			ki.restore(kv.Revision{Main: r.hdr.create}, r.rev, r.hdr.version)
		}
		b.byKey[unsafe.String(unsafe.SliceData(ki.key), len(ki.key))] = ki
	}
	if r.tomb || r.hdr.lease == 0 {
		delete(b.leaseOf, ki)
	} else {
		b.leaseOf[ki] = r.hdr.lease
	}
}

// sorted returns every key's index in key order: the tree's inserts then
// each go down the same path as the one before, which its caches still
// hold. A large index is sorted in two halves at once, then merged.
func (b *indexBuilder) sorted() []*keyIndex {
	kis := make([]*keyIndex, 0, len(b.byKey))
	for _, ki := range b.byKey {
		kis = append(kis, ki)
	}
	byKey := func(a, b *keyIndex) int { return bytes.Compare(a.key, b.key) }
	if len(kis) < parallelSortMin {
		slices.SortFunc(kis, byKey)
		return kis
	}
	lo, hi := kis[:len(kis)/2], kis[len(kis)/2:]
	var wg sync.WaitGroup
	wg.Go(func() { slices.SortFunc(lo, byKey) })
	slices.SortFunc(hi, byKey)
	wg.Wait()
	merged := make([]*keyIndex, 0, len(kis))
	for len(lo) > 0 && len(hi) > 0 {
		if byKey(lo[0], hi[0]) <= 0 {
			merged, lo = append(merged, lo[0]), lo[1:]
		} else {
			merged, hi = append(merged, hi[0]), hi[1:]
		}
	}
	merged = append(merged, lo...)
	return append(merged, hi...)
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
