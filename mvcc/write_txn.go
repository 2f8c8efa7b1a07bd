package mvcc

import (
	"bytes"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/httpkv/httpkv/kv"
)

// WriteTxn is one write request's view of the store, valid only inside the
// function given to Store.Write. Its reads see its own earlier writes.
type WriteTxn struct {
	s    *Store
	tx   *bolt.Tx
	keys *bolt.Bucket

	rev int64 // the revision this request's writes get
	// events are this request's writes to the key history, in order: the
	// write of events[i] is at sub-revision i, which is all rollback
	// needs to undo it, so that a write of a million keys keeps no second
	// list of them.
	events []kv.Event
	// undo reverses the writes to other buckets.
	undo   []undoEntry
	leases []leaseMove // this request's moves of keys between leases
	stages []stage     // memory changes to apply once committed

	// metaWritten is set by writes outside the key history (other
	// buckets) that must be committed even if no revision is made.
	metaWritten bool
	// mustCommit is set by writes that are not undone if the request
	// fails (a raised alarm, compaction bookkeeping) and must be committed
	// even though they make no revision.
	mustCommit bool
	// direct is set by every write outside the key history's new
	// records (other buckets, compaction's deletes): the write-ahead log
	// holds history records only, so a batch with such a write is
	// committed to bbolt, a checkpoint, instead of logged. Kept when the
	// request fails.
	direct bool
	// logged are this request's history records, for the log.
	logged []walRecord
}

// undoEntry reverses one write to a bucket other than the key history,
// if the request fails: it puts back the previous value (nil when the
// key did not exist).
type undoEntry struct {
	bucket, key, prev []byte
}

func newWriteTxn(s *Store, tx *bolt.Tx) *WriteTxn {
	keys := tx.Bucket(keyBucket)
	// History keys only ever grow: fill pages completely.
	keys.FillPercent = 0.9
	return &WriteTxn{s: s, tx: tx, keys: keys, rev: s.currentRev + 1}
}

// Rev returns the revision reads in this transaction see: the store's
// current revision, or this request's own once it has written.
func (t *WriteTxn) Rev() int64 {
	if len(t.events) == 0 {
		return t.rev - 1
	}
	return t.rev
}

// view returns a reader of the store as this transaction sees it.
func (t *WriteTxn) view() view {
	return view{s: t.s, keys: records{b: t.keys}, rev: t.Rev()}
}

// Range reads keys as this transaction sees them.
func (t *WriteTxn) Range(key, end []byte, opts kv.RangeOptions) (kv.RangeResult, error) {
	return t.view().rangeKV(key, end, opts)
}

// nextRev returns the revision of the next write.
func (t *WriteTxn) nextRev() kv.Revision {
	return kv.Revision{Main: t.rev, Sub: int64(len(t.events))}
}

// writeKV appends rec to the history at rev and records it in the index.
func (t *WriteTxn) writeKV(rec kv.KeyValue, tombstone bool) error {
	rev := t.nextRev()
	if rev.Main > MaxRevision {
		return kv.Errorf(kv.ErrNoSpace, "the store is at revision %d, the last it holds", MaxRevision)
	}
	// bbolt keeps the value slice, not a copy, until the transaction
	// commits: every record needs a buffer of its own.
	record := encodeKeyValue(make([]byte, 0, maxRecordHeaderLen+len(rec.Key)+len(rec.Value)), &rec)
	t.s.batchBytes += int64(len(record) + markedRevBytesLen)
	key := revBytes(rev, tombstone)
	if err := t.keys.Put(key, record); err != nil {
		return fmt.Errorf("mvcc: write revision %v: %w", rev, err)
	}
	t.logged = append(t.logged, walRecord{key: key, value: record})
	// The event and the index refer to the record's own copy of the key
	// and value, never to the caller's buffers, which the caller may reuse
	// while watchers still hold the event.
	body := record[len(record)-len(rec.Key)-len(rec.Value):]
	rec.Key, rec.Value = body[:len(rec.Key):len(rec.Key)], body[len(rec.Key):]
	if tombstone {
		if err := t.s.index.tombstone(rec.Key, rev); err != nil {
			// No event records the write for rollback to undo: undo
			// it here.
			_ = t.keys.Delete(key)
			t.logged = t.logged[:len(t.logged)-1]
			return fmt.Errorf("mvcc: tombstone %q: %w", rec.Key, err)
		}
		t.events = append(t.events, kv.Event{Type: kv.EventDelete, KV: kv.KeyValue{Key: rec.Key, ModRevision: rev.Main}})
	} else {
		t.s.index.put(rec.Key, rev)
		t.events = append(t.events, kv.Event{Type: kv.EventPut, KV: rec})
	}
	return nil
}

// UnsafePut writes key=value to bucket, created if needed, in this
// transaction. It is for state kept beside the key history (leases, auth):
// it makes no revision and no event.
func (t *WriteTxn) UnsafePut(bucket, key, value []byte) error {
	t.direct = true
	b, err := t.tx.CreateBucketIfNotExists(bucket)
	if err != nil {
		return fmt.Errorf("mvcc: bucket %q: %w", bucket, err)
	}
	prev := b.Get(key)
	if prev != nil {
		prev = bytes.Clone(prev)
	}
	if err := b.Put(bytes.Clone(key), bytes.Clone(value)); err != nil {
		return fmt.Errorf("mvcc: put in %q: %w", bucket, err)
	}
	t.undo = append(t.undo, undoEntry{bucket: bytes.Clone(bucket), key: bytes.Clone(key), prev: prev})
	t.metaWritten = true
	t.direct = true
	return nil
}

// UnsafeDelete removes key from bucket in this transaction.
func (t *WriteTxn) UnsafeDelete(bucket, key []byte) error {
	b := t.tx.Bucket(bucket)
	if b == nil {
		return nil
	}
	prev := b.Get(key)
	if prev == nil {
		return nil
	}
	prev = bytes.Clone(prev)
	if err := b.Delete(key); err != nil {
		return fmt.Errorf("mvcc: delete in %q: %w", bucket, err)
	}
	t.undo = append(t.undo, undoEntry{bucket: bytes.Clone(bucket), key: bytes.Clone(key), prev: prev})
	t.metaWritten = true
	t.direct = true
	return nil
}

// UnsafeGet reads key from bucket as this transaction sees it; the result
// is a copy.
func (t *WriteTxn) UnsafeGet(bucket, key []byte) []byte {
	b := t.tx.Bucket(bucket)
	if b == nil {
		return nil
	}
	return bytes.Clone(b.Get(key))
}

// rollback undoes every write of a failed request, newest first, and
// what it staged. The writes to other buckets and those to the key
// history touch different buckets and different memory: each kind is
// undone in its own order.
func (t *WriteTxn) rollback() {
	undoStages(t.stages)
	for i := len(t.undo) - 1; i >= 0; i-- {
		u := t.undo[i]
		b := t.tx.Bucket(u.bucket)
		if u.prev == nil {
			_ = b.Delete(u.key)
		} else {
			_ = b.Put(u.key, u.prev)
		}
	}
	for i := len(t.events) - 1; i >= 0; i-- {
		ev := &t.events[i]
		rev := kv.Revision{Main: t.rev, Sub: int64(i)}
		tombstone := ev.Type == kv.EventDelete
		_ = t.keys.Delete(revBytes(rev, tombstone))
		t.s.index.unput(ev.KV.Key, rev, tombstone)
	}
	t.undo, t.events, t.leases, t.stages, t.logged = nil, nil, nil, nil, nil
	t.metaWritten = false
}

// finish makes a successful request's writes part of the batch.
func (t *WriteTxn) finish() kv.Changes {
	t.s.batchMoves = append(t.s.batchMoves, t.leases...)
	if len(t.events) == 0 {
		return kv.Changes{Revision: t.rev - 1}
	}
	t.s.currentRev = t.rev
	return kv.Changes{Revision: t.rev, Events: t.events}
}
