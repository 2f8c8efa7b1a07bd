package mvcc

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"runtime"
	"runtime/debug"
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
		s.alarmNoSpace.Store(meta.Get(metaAlarmNoSpace) != nil)
		var err error
		// With the records of a log that could not be replayed into the
		// file (see Open) after the file's own.
		keys := records{b: tx.Bucket(keyBucket), pending: s.pendingRecs}
		if s.currentRev, s.compactRev, err = storedRevisions(tx, keys); err != nil {
			return err
		}
		if finished := readInt64(meta, metaFinishedCompact); s.compactRev > finished {
			unfinishedCompact = s.compactRev
		}
		var b indexBuilder
		b.keysHint = int(min(s.currentRev-s.compactRev, maxRestoreKeysHint))
		if err := b.build(restoreShards(), scanHistory(keys)); err != nil {
			return err
		}
		s.index.insertRestored(b.sorted())
		if s.lessor == nil {
			return nil
		}
		// Attach every live leased key to its lease.
		for _, sb := range b.shards {
			for ki, id := range sb.leaseOf {
				leased = append(leased, kv.KeyValue{Key: ki.key, Lease: id})
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("mvcc: recover %s: %w", s.path, err)
	}
	for _, rec := range leased {
		s.lessor.Attach(rec.Lease, rec.Key)
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
	// restoreBatchLen is how many records the scan hands a shard at a
	// time, and restoreBatches how many of a shard's batches are in
	// flight: enough that neither side waits on the other for long, few
	// enough to stay in the caches.
	restoreBatchLen = 4096
	restoreBatches  = 4
	// maxRestoreShards bounds the goroutines that build the keys'
	// indexes, whatever the machine's processors.
	maxRestoreShards = 8
	// maxRestoreKeysHint bounds the keys a restore makes room for ahead:
	// the revisions of a history bound its keys, but a history of many
	// revisions a key has far fewer keys than revisions, and the room
	// made for the rest, about 25 bytes a key, is wasted until the
	// restore ends.
	maxRestoreKeysHint = 1 << 21
)

// restoreShards is how many goroutines build the keys' indexes: one per
// processor the runtime may use, beside the one that scans.
func restoreShards() int {
	return min(max(runtime.GOMAXPROCS(0), 1), maxRestoreShards)
}

// indexBuilder rebuilds each key's index from the history, record by
// record in revision order. The keys are split among shards by a hash of
// the key, each shard built by a goroutine of its own: every record of a
// key goes to the same shard, in revision order, so a shard sees each of
// its keys' histories whole and the shards share nothing.
type indexBuilder struct {
	// keysHint is how many keys the history may hold, at most: the maps
	// of keys are made that large, so that they need not grow (and
	// rehash every key they hold) while the restore runs.
	keysHint int
	shards   []*shardBuilder
}

// shardBuilder builds the indexes of one shard's keys.
type shardBuilder struct {
	// byKey holds every key's index, by its key. The map's string keys
	// alias the keyIndex's own key bytes, which never change, so a key is
	// copied once.
	byKey map[string]*keyIndex
	// leaseOf is the lease of each key's newest put, while the key lives:
	// read from the records as they go by, so that no key's record is
	// read again to find it.
	leaseOf map[*keyIndex]int64
	slab    keyIndexSlab
	// shared is the prefix every key of the shard shares, taken as each
	// key is first seen and still in the caches.
	shared []byte
	// sorted is every key's index in key order, once the shard's records
	// have all been added.
	sorted []*keyIndex
}

// build reads every record that scan emits, in revision order, into the
// builder's shards. scan runs on this goroutine, reading and decoding,
// while the shards' goroutines add the records to the keys' indexes and
// then sort their keys, so that a restart takes about the longest of
// them, not their sum. Every shard is done when build returns, before the
// transaction whose pages the records alias can end.
func (b *indexBuilder) build(shards int, scan func(emit func(scannedRecord)) error) error {
	b.shards = make([]*shardBuilder, shards)
	full := make([]chan []scannedRecord, shards)
	free := make([]chan []scannedRecord, shards)
	var wg sync.WaitGroup
	for i := range shards {
		sb := &shardBuilder{byKey: make(map[string]*keyIndex, b.keysHint/shards), leaseOf: make(map[*keyIndex]int64)}
		b.shards[i] = sb
		full[i] = make(chan []scannedRecord, restoreBatches)
		free[i] = make(chan []scannedRecord, restoreBatches)
		for range restoreBatches {
			free[i] <- make([]scannedRecord, 0, restoreBatchLen)
		}
		wg.Go(func() {
			for batch := range full[i] {
				for j := range batch {
					sb.add(&batch[j])
				}
				free[i] <- batch[:0]
			}
			sb.sort()
		})
	}
	batches := make([][]scannedRecord, shards)
	for i := range batches {
		batches[i] = <-free[i]
	}
	seed := maphash.MakeSeed()
	err := scan(func(r scannedRecord) {
		i := 0
		if shards > 1 {
			i = int(maphash.Bytes(seed, r.hdr.key) % uint64(shards))
		}
		batches[i] = append(batches[i], r)
		if len(batches[i]) == cap(batches[i]) {
			full[i] <- batches[i]
			batches[i] = <-free[i]
		}
	})
	for i := range batches {
		if len(batches[i]) > 0 {
			full[i] <- batches[i]
		}
		close(full[i])
	}
	wg.Wait()
	return err
}

// scanHistory decodes the records of the history in tx in revision order,
// checks each (checkRecord) and emits it. checkFile made sure that bbolt
// reads nothing outside its pages here; should it panic or fault all the
// same, that is an ErrCorrupt too.
func scanHistory(keys records) func(emit func(scannedRecord)) error {
	return func(emit func(scannedRecord)) (err error) {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("%w: reading the history: %v", ErrCorrupt, r)
			}
		}()
		c := keys.Cursor()
		prev := kv.Revision{Main: 0, Sub: -1}
		for k, v := c.First(); k != nil; k, v = c.Next() {
			rev, tomb, err := parseRevBytes(k)
			if err != nil {
				return err
			}
			hdr, value, err := decodeHeader(v)
			if err != nil {
				return fmt.Errorf("revision %v: %w", rev, err)
			}
			if err := checkRecord(rev, tomb, hdr, value); err != nil {
				return fmt.Errorf("%w: the record at revision %d (sub %d): %w", ErrCorrupt, rev.Main, rev.Sub, err)
			}
			// bbolt orders the keys by their bytes, which order
			// revisions: a record at or below the one before is two
			// records of one revision, or keys out of order.
			if !rev.GreaterThan(prev) {
				return fmt.Errorf("%w: the record at revision %d (sub %d) follows the one at %d (sub %d)", ErrCorrupt, rev.Main, rev.Sub, prev.Main, prev.Sub)
			}
			prev = rev
			emit(scannedRecord{rev: rev, tomb: tomb, hdr: hdr})
		}
		return nil
	}
}

// add applies one record, the newest so far, to its key's index.
func (b *shardBuilder) add(r *scannedRecord) {
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
		ki = b.slab.keyIndex(r.hdr.key)
		if len(b.byKey) == 0 {
			b.shared = ki.key
		} else {
			b.shared = b.shared[:commonPrefixLen(b.shared, ki.key)]
		}
		if r.tomb {
			ki.restoreTombstone(r.rev)
		} else {
			ki.modified = r.rev
			ki.generations = b.slab.generation(kv.Revision{Main: r.hdr.create}, r.rev, r.hdr.version)
		}
		b.byKey[unsafe.String(unsafe.SliceData(ki.key), len(ki.key))] = ki
	}
	if r.tomb || r.hdr.lease == 0 {
		delete(b.leaseOf, ki)
	} else {
		b.leaseOf[ki] = r.hdr.lease
	}
}

// sort puts the shard's keys in key order, so that the tree's inserts
// each go down the same path as the one before, which its caches still
// hold.
//
// Keys stored together tend to share a long prefix ("/registry/pods/..."),
// which a comparison of whole keys steps over every time, through two
// pointers to bytes scattered over the heap. So the sort compares the 16
// bytes after the prefix every key of the shard shares, held beside each
// key's pointer, and looks at the keys themselves only where those are
// equal. Zero-padded big-endian words order as the bytes do, except
// that a key and the same key with zero bytes appended tie: the whole
// comparison settles those.
func (b *shardBuilder) sort() {
	b.sorted = make([]*keyIndex, 0, len(b.byKey))
	for _, ki := range b.byKey {
		b.sorted = append(b.sorted, ki)
	}
	if len(b.sorted) < 2 {
		return
	}
	type entry struct {
		hi, lo uint64
		ki     *keyIndex
	}
	entries := make([]entry, len(b.sorted))
	for i, ki := range b.sorted {
		var word [16]byte
		copy(word[:], ki.key[len(b.shared):])
		entries[i] = entry{binary.BigEndian.Uint64(word[:8]), binary.BigEndian.Uint64(word[8:]), ki}
	}
	slices.SortFunc(entries, func(a, b entry) int {
		if c := cmp.Compare(a.hi, b.hi); c != 0 {
			return c
		}
		if c := cmp.Compare(a.lo, b.lo); c != 0 {
			return c
		}
		return compareKeyIndex(a.ki, b.ki)
	})
	for i := range entries {
		b.sorted[i] = entries[i].ki
	}
}

// commonPrefixLen returns the length of the longest prefix a and b share.
func commonPrefixLen(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

func compareKeyIndex(a, b *keyIndex) int { return bytes.Compare(a.key, b.key) }

// sorted returns every key's index in key order: the shards' sorted keys,
// merged.
func (b *indexBuilder) sorted() []*keyIndex {
	runs := make([][]*keyIndex, len(b.shards))
	for i, sb := range b.shards {
		runs[i] = sb.sorted
	}
	return mergeSorted(runs)
}

// mergeSorted merges runs of keys, each in key order and no key in two,
// into one, two runs at a time.
func mergeSorted(runs [][]*keyIndex) []*keyIndex {
	if len(runs) == 0 {
		return nil
	}
	for len(runs) > 1 {
		next := runs[:0:0]
		for i := 0; i < len(runs); i += 2 {
			if i+1 == len(runs) {
				next = append(next, runs[i])
				break
			}
			next = append(next, merge2(runs[i], runs[i+1]))
		}
		runs = next
	}
	return runs[0]
}

func merge2(lo, hi []*keyIndex) []*keyIndex {
	merged := make([]*keyIndex, 0, len(lo)+len(hi))
	for len(lo) > 0 && len(hi) > 0 {
		if compareKeyIndex(lo[0], hi[0]) <= 0 {
			merged, lo = append(merged, lo[0]), lo[1:]
		} else {
			merged, hi = append(merged, hi[0]), hi[1:]
		}
	}
	merged = append(merged, lo...)
	return append(merged, hi...)
}

// storedRevisions reads the revision and the compact revision of the
// state in tx: the newest revision in the history, and at least 1 (the
// empty store's); the compact revision is the scheduled one, which is
// not above it (see checkCompactMarks). A revision outside those bounds
// is an ErrCorrupt.
func storedRevisions(tx *bolt.Tx, keys records) (rev, compactRev int64, err error) {
	var last int64
	if k, _ := keys.Cursor().Last(); k != nil {
		r, _, err := parseRevBytes(k)
		if err != nil {
			return 0, 0, err
		}
		if r.Main < 1 || r.Main > MaxRevision {
			return 0, 0, fmt.Errorf("%w: the newest record is at main revision %d, outside [1, %d]", ErrCorrupt, uint64(r.Main), MaxRevision)
		}
		last = r.Main
	}
	scheduled, _, err := checkCompactMarks(tx.Bucket(metaBucket), last)
	if err != nil {
		return 0, 0, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return max(last, 1), scheduled, nil
}
