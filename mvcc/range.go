package mvcc

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// SortTarget is the field a range sorts by.
type SortTarget int

const (
	SortByKey SortTarget = iota
	SortByVersion
	SortByCreate
	SortByMod
	SortByValue
)

// SortOrder is the direction of a range's sort.
type SortOrder int

const (
	SortNone SortOrder = iota
	SortAscend
	SortDescend
)

// RangeOptions select and shape the result of a range.
//
// A range covers one key when end is nil or empty, [key, end) otherwise,
// and every key >= key when end is the single byte 0 (etcd's convention,
// so key "\x00" with end "\x00" is the whole keyspace).
type RangeOptions struct {
	Revision   int64 // read at this revision; 0 for the current one
	Limit      int64 // at most this many keys; 0 for no limit
	SortTarget SortTarget
	SortOrder  SortOrder
	KeysOnly   bool // leave values out
	CountOnly  bool // return only the count

	// Filters on each key's revisions; 0 means no bound.
	MinModRevision    int64
	MaxModRevision    int64
	MinCreateRevision int64
	MaxCreateRevision int64
}

// RangeResult is what a range found.
type RangeResult struct {
	KVs []KeyValue
	// Count is the number of keys in the range at the revision read, before
	// the limit and the revision filters.
	Count int64
	// More reports that the limit left keys out.
	More bool
	// Revision is the store's current revision when the range was served
	// (not the revision read at), as in etcd's response header.
	Revision int64
}

func (o *RangeOptions) validate() error {
	if o.SortTarget < SortByKey || o.SortTarget > SortByValue {
		return invalidf("unknown sort target %d", o.SortTarget)
	}
	if o.SortOrder < SortNone || o.SortOrder > SortDescend {
		return invalidf("unknown sort order %d", o.SortOrder)
	}
	if o.Limit < 0 {
		return invalidf("negative limit %d", o.Limit)
	}
	if o.Revision < 0 {
		return invalidf("negative revision %d", o.Revision)
	}
	return nil
}

// normalizeRange turns etcd's range end convention into the index's: nil
// for a single key, empty for no upper bound.
func normalizeRange(end []byte) []byte {
	switch {
	case len(end) == 0:
		return nil
	case len(end) == 1 && end[0] == 0:
		return []byte{}
	}
	return end
}

// view reads the store at one revision through one bbolt transaction.
type view struct {
	s    *Store
	keys *bolt.Bucket
	rev  int64 // the revision the view is current at
}

// checkRev resolves a requested read revision against the view.
func (v view) checkRev(rev int64) (int64, error) {
	if rev > v.rev {
		return 0, fmt.Errorf("%w: revision %d, current %d", ErrFutureRev, rev, v.rev)
	}
	if rev <= 0 {
		rev = v.rev
	}
	if rev < v.s.compactRev {
		return 0, &CompactedError{CompactRevision: v.s.compactRev}
	}
	return rev, nil
}

// get reads the version of kr from the history.
func (v view) get(kr keyRev) (KeyValue, error) {
	raw := v.keys.Get(revBytes(kr.rev, false))
	if raw == nil {
		return KeyValue{}, fmt.Errorf("%w: revision %v of %q missing from history", ErrCorrupt, kr.rev, kr.key)
	}
	return decodeKeyValue(raw)
}

// current returns the key's version at the view's revision, if it exists.
func (v view) current(key []byte) (KeyValue, bool, error) {
	kr, err := v.s.index.get(key, v.rev)
	if err != nil {
		return KeyValue{}, false, nil
	}
	kv, err := v.get(kr)
	return kv, err == nil, err
}

// keysIn returns the keys of [key, end) alive at rev, at most limit of them
// (0 for all), and how many there are in all.
func (v view) keysIn(key, end []byte, rev int64, limit int) ([]keyRev, int64) {
	var krs []keyRev
	var count int64
	v.s.index.visit(key, normalizeRange(end), rev, func(kr keyRev) bool {
		count++
		if limit <= 0 || len(krs) < limit {
			krs = append(krs, kr)
		}
		return true
	})
	return krs, count
}

// rangeKV serves a range as etcd's server does: the filters and sorts work
// on the whole range, the limit applies last.
func (v view) rangeKV(key, end []byte, o RangeOptions) (RangeResult, error) {
	if len(key) == 0 {
		return RangeResult{}, invalidf("empty key")
	}
	if err := o.validate(); err != nil {
		return RangeResult{}, err
	}
	rev, err := v.checkRev(o.Revision)
	if err != nil {
		return RangeResult{}, err
	}
	filtered := o.MinModRevision != 0 || o.MaxModRevision != 0 ||
		o.MinCreateRevision != 0 || o.MaxCreateRevision != 0
	fetch := int(o.Limit)
	if o.SortOrder != SortNone || filtered {
		fetch = 0 // sort and filter everything, then cut
	} else if fetch > 0 {
		fetch++ // one more to learn whether there are more
	}
	krs, count := v.keysIn(key, end, rev, fetch)
	res := RangeResult{Count: count, Revision: v.rev}
	if o.CountOnly {
		return res, nil
	}
	res.KVs = make([]KeyValue, 0, len(krs))
	for _, kr := range krs {
		if !inBounds(kr.rev.Main, o.MinModRevision, o.MaxModRevision) ||
			!inBounds(kr.created.Main, o.MinCreateRevision, o.MaxCreateRevision) {
			continue
		}
		kv, err := v.get(kr)
		if err != nil {
			return RangeResult{}, err
		}
		res.KVs = append(res.KVs, kv)
	}
	sortKVs(res.KVs, o.SortTarget, o.SortOrder)
	if o.Limit > 0 && int64(len(res.KVs)) > o.Limit {
		res.KVs = res.KVs[:o.Limit]
		res.More = true
	}
	if o.KeysOnly {
		for i := range res.KVs {
			res.KVs[i].Value = nil
		}
	}
	return res, nil
}

func inBounds(n, lo, hi int64) bool {
	return (lo == 0 || n >= lo) && (hi == 0 || n <= hi)
}

// sortKVs sorts key-ordered kvs as etcd does: a target other than the key
// sorts ascending by default, and ties keep key order.
func sortKVs(kvs []KeyValue, target SortTarget, order SortOrder) {
	if target != SortByKey && order == SortNone {
		order = SortAscend
	}
	if order == SortNone || (target == SortByKey && order == SortAscend) {
		return
	}
	var by func(a, b *KeyValue) int
	switch target {
	case SortByKey:
		by = func(a, b *KeyValue) int { return bytes.Compare(a.Key, b.Key) }
	case SortByVersion:
		by = func(a, b *KeyValue) int { return cmp.Compare(a.Version, b.Version) }
	case SortByCreate:
		by = func(a, b *KeyValue) int { return cmp.Compare(a.CreateRevision, b.CreateRevision) }
	case SortByMod:
		by = func(a, b *KeyValue) int { return cmp.Compare(a.ModRevision, b.ModRevision) }
	case SortByValue:
		by = func(a, b *KeyValue) int { return bytes.Compare(a.Value, b.Value) }
	}
	if order == SortDescend {
		asc := by
		by = func(a, b *KeyValue) int { return asc(b, a) }
	}
	slices.SortStableFunc(kvs, func(a, b KeyValue) int { return by(&a, &b) })
}
