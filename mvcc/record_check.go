package mvcc

import (
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/httpkv/httpkv/kv"
)

// Open refuses a store whose records are not ones the store writes, so
// that an edited file (a backup altered and given a new hash) cannot make
// a server misbehave: a history record at a revision past MaxRevision
// would wrap to a negative one and let new writes overwrite old records,
// a version at the largest int64 would wrap on the next put, a compact
// revision past the newest record would move the store's revision
// ahead. Each check is of one record, or of the records in the order
// the restore reads them anyway, so it costs the restart nothing it
// does not already read.

// checkRecord checks one history record, decoded, against what a write
// stores: its revision (main and sub) in [1, MaxRevision] and [0,
// MaxRevision], a non-empty key, and
//   - for a put: mod_revision its revision, 1 <= create_revision <=
//     mod_revision, version in [1, MaxRevision], a lease that is 0 or in
//     [1, kv.MaxLeaseID];
//   - for a tombstone: mod_revision its revision, and no create revision,
//     version, lease or value.
//
// Whether a leased key's lease exists is the lessor's to check, when it
// restores the leases (lease.Lessor.Restore).
func checkRecord(rev kv.Revision, tomb bool, hdr recordHeader, value []byte) error {
	switch {
	case rev.Main < 1 || rev.Main > MaxRevision:
		return fmt.Errorf("main revision %d outside [1, %d]", uint64(rev.Main), MaxRevision)
	case rev.Sub < 0 || rev.Sub > MaxRevision:
		return fmt.Errorf("sub revision %d outside [0, %d]", uint64(rev.Sub), MaxRevision)
	case len(hdr.key) == 0:
		return fmt.Errorf("an empty key")
	case hdr.mod != rev.Main:
		return fmt.Errorf("mod_revision %d in a record at revision %d", uint64(hdr.mod), rev.Main)
	case tomb && (hdr.create != 0 || hdr.version != 0 || hdr.lease != 0 || len(value) != 0):
		return fmt.Errorf("a delete with create_revision %d, version %d, lease %d and %d bytes of value, want none",
			uint64(hdr.create), uint64(hdr.version), uint64(hdr.lease), len(value))
	case tomb:
		return nil
	case hdr.create < 1 || hdr.create > hdr.mod:
		return fmt.Errorf("create_revision %d outside [1, mod_revision %d]", uint64(hdr.create), hdr.mod)
	case hdr.version < 1 || hdr.version > MaxRevision:
		return fmt.Errorf("version %d outside [1, %d]", uint64(hdr.version), MaxRevision)
	case hdr.lease < 0 || hdr.lease > kv.MaxLeaseID:
		return fmt.Errorf("lease %d outside [0 (none), %d]", uint64(hdr.lease), kv.MaxLeaseID)
	}
	return nil
}

// checkCompactMarks checks the compaction marks of the meta bucket
// against the newest revision of the history, last (0 for none): each
// 8 bytes if present, the finished one not above the scheduled one, and
// neither above the store's revision, which is at least 1. A compaction
// is scheduled at a revision the store has reached, and the records of
// that revision are the newest of their keys at it, so it keeps them.
func checkCompactMarks(meta *bolt.Bucket, last int64) (scheduled, finished int64, err error) {
	for _, k := range [][]byte{metaScheduledCompact, metaFinishedCompact} {
		if v := meta.Get(k); v != nil && len(v) != 8 {
			return 0, 0, fmt.Errorf("meta %q is %d bytes, want 8", k, len(v))
		}
	}
	scheduled, finished = readInt64(meta, metaScheduledCompact), readInt64(meta, metaFinishedCompact)
	rev := max(last, 1)
	switch {
	case scheduled < 0 || scheduled > rev:
		return 0, 0, fmt.Errorf("a compaction scheduled at revision %d, outside [0, the store's revision %d]", uint64(scheduled), rev)
	case finished < 0 || finished > scheduled:
		return 0, 0, fmt.Errorf("a compaction finished at revision %d, outside [0, the scheduled %d]", uint64(finished), scheduled)
	}
	return scheduled, finished, nil
}
