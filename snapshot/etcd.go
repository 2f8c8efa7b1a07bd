package snapshot

import (
	"encoding/binary"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
	"go.etcd.io/etcd/api/v3/mvccpb"
)

// A gateway to an etcd cluster streams etcd's own snapshot (its member's
// bbolt file and the file's SHA-256): the same frame as httpkv's, another
// store inside. `httpkv snapshot save` and `status` take it, reading
// etcd's layout; it is restored by etcd's tools (etcdutl snapshot
// restore), not into a data directory of httpkv's.

// Formats of the store inside a snapshot (Info.Format).
const (
	FormatHTTPKV = "httpkv"
	FormatEtcd   = "etcd"
)

// ErrEtcdSnapshot: Restore of an etcd snapshot, which etcd's tools
// restore.
var ErrEtcdSnapshot = errors.New("snapshot: an etcd snapshot: restore it into an etcd member with etcdutl snapshot restore")

// etcd's buckets and meta keys, as its storage schema names them.
var (
	etcdKeyBucket     = []byte("key")
	etcdMetaBucket    = []byte("meta")
	etcdLeaseBucket   = []byte("lease")
	etcdMembersBucket = []byte("members")
	etcdConsistentIdx = []byte("consistent_index")
	etcdTerm          = []byte("term")
	etcdFinishedComp  = []byte("finishedCompactRev")
	etcdScheduledComp = []byte("scheduledCompactRev")
)

// etcdRevBytes is the size of etcd's revision keys: the main revision, a
// '_', the sub revision; a tombstone's has a 't' after them.
const etcdRevBytes = 17

// isEtcd reports whether the bbolt file at path holds an etcd member's
// store: its membership bucket and its consistent index, which httpkv's
// store has neither of.
func isEtcd(path string) bool {
	db, err := bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true})
	if err != nil {
		return false
	}
	defer db.Close()
	found := false
	_ = db.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(etcdMetaBucket)
		found = tx.Bucket(etcdMembersBucket) != nil && meta != nil && meta.Get(etcdConsistentIdx) != nil
		return nil
	})
	return found
}

// examineEtcd reports what an etcd member's store holds: its revision and
// compact revision, its live keys (every namespace's) and its leases.
// It reads every record of the history, as etcd does when it starts, and
// refuses one etcd does not write (see checkEtcdRecord) and meta values
// of the wrong size. The file's pages were checked (mvcc.CheckFile).
func examineEtcd(path string) (Info, error) {
	db, err := bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true})
	if err != nil {
		return Info{}, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	defer db.Close()
	info := Info{Format: FormatEtcd}
	err = db.View(func(tx *bolt.Tx) error {
		keys := tx.Bucket(etcdKeyBucket)
		if keys == nil {
			return fmt.Errorf("no %q bucket", etcdKeyBucket)
		}
		live := make(map[string]bool)
		err := keys.ForEach(func(k, v []byte) error {
			main, tomb, kv, err := checkEtcdRecord(k, v)
			if err != nil {
				return err
			}
			info.Revision = max(info.Revision, main)
			live[string(kv.Key)] = !tomb
			return nil
		})
		if err != nil {
			return err
		}
		for _, alive := range live {
			if alive {
				info.Keys++
			}
		}
		meta := tx.Bucket(etcdMetaBucket)
		for _, k := range [][]byte{etcdConsistentIdx, etcdTerm, etcdFinishedComp, etcdScheduledComp} {
			if v := meta.Get(k); v != nil && len(v) != 8 {
				return fmt.Errorf("meta %q is %d bytes, want 8", k, len(v))
			}
		}
		scheduled, finished := etcdInt64(meta, etcdScheduledComp), etcdInt64(meta, etcdFinishedComp)
		if scheduled < 0 || finished < 0 || (meta.Get(etcdScheduledComp) != nil && finished > scheduled) {
			return fmt.Errorf("compaction finished at %d, scheduled at %d", uint64(finished), uint64(scheduled))
		}
		info.CompactRevision = finished
		info.Revision = max(info.Revision, info.CompactRevision)
		if leases := tx.Bucket(etcdLeaseBucket); leases != nil {
			err := leases.ForEach(func(k, _ []byte) error {
				if len(k) != 8 {
					return fmt.Errorf("a lease key of %d bytes, want 8", len(k))
				}
				info.Leases++
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return Info{}, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return info, nil
}

// checkEtcdRecord decodes one record of etcd's history and checks it
// against what etcd writes: a revision key of a main revision in [1,
// MaxInt64], a '_', a sub revision in [0, MaxInt64], and a 't' after
// them for a delete; a KeyValue with a key, and for a put its revision
// as mod_revision, 1 <= create_revision <= mod_revision, a version of
// at least 1 and a lease that is not negative.
func checkEtcdRecord(k, v []byte) (main int64, tomb bool, kv mvccpb.KeyValue, err error) {
	switch {
	case len(k) == etcdRevBytes+1 && k[etcdRevBytes] == 't':
		tomb = true
	case len(k) != etcdRevBytes:
		return 0, false, kv, fmt.Errorf("a revision key of %d bytes", len(k))
	}
	main, sub := int64(binary.BigEndian.Uint64(k)), int64(binary.BigEndian.Uint64(k[9:]))
	if k[8] != '_' || main < 1 || sub < 0 {
		return 0, false, kv, fmt.Errorf("a revision key %x: want a main revision of at least 1, '_', a sub revision", k)
	}
	if err := kv.Unmarshal(v); err != nil {
		return 0, false, kv, fmt.Errorf("the record at revision %d: %w", main, err)
	}
	switch {
	case len(kv.Key) == 0:
		err = errors.New("an empty key")
	case tomb:
	case kv.ModRevision != main:
		err = fmt.Errorf("mod_revision %d", kv.ModRevision)
	case kv.CreateRevision < 1 || kv.CreateRevision > kv.ModRevision:
		err = fmt.Errorf("create_revision %d outside [1, mod_revision %d]", kv.CreateRevision, kv.ModRevision)
	case kv.Version < 1:
		err = fmt.Errorf("version %d", kv.Version)
	case kv.Lease < 0:
		err = fmt.Errorf("lease %d", kv.Lease)
	}
	if err != nil {
		return 0, false, kv, fmt.Errorf("the record at revision %d_%d: %w", main, sub, err)
	}
	return main, tomb, kv, nil
}

// etcdInt64 reads an 8-byte meta value, 0 when missing.
func etcdInt64(meta *bolt.Bucket, key []byte) int64 {
	if v := meta.Get(key); len(v) == 8 {
		return int64(binary.BigEndian.Uint64(v))
	}
	return 0
}
