package mvcc

import (
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/httpkv/httpkv/keyrange"
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

// RangeOptions select and shape the result of a range. The keys a range
// reads, a key and an end, are a keyrange.Range.
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

	// Limits, if set, bounds what the range may copy out of the store; the
	// ranges of one answer (a txn's) share one. Nil: no bound.
	Limits *ReadLimits
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
	raw, err := v.raw(kr)
	if err != nil {
		return KeyValue{}, err
	}
	return decodeKeyValue(raw)
}

// raw returns the record of the version kr names, aliasing the pages of
// the view's transaction.
func (v view) raw(kr keyRev) ([]byte, error) {
	raw := v.keys.Get(revBytes(kr.rev, false))
	if raw == nil {
		return nil, fmt.Errorf("%w: revision %v of %q missing from history", ErrCorrupt, kr.rev, kr.key)
	}
	return raw, nil
}

// record returns the header and the value of the version kr names, both
// aliasing the pages of the view's transaction.
func (v view) record(kr keyRev) (recordHeader, []byte, error) {
	raw, err := v.raw(kr)
	if err != nil {
		return recordHeader{}, nil, err
	}
	return decodeHeader(raw)
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
	v.s.index.visit(keyrange.Range{Key: key, End: end}, rev, func(kr keyRev) bool {
		count++
		if limit <= 0 || len(krs) < limit {
			krs = append(krs, kr)
		}
		return true
	})
	return krs, count
}

// rangeKV serves a range as etcd's server does: the filters and sorts work
// on the whole range, the limit applies last. It reads only what it
// returns: filters and sorts by key, version or revision work on the
// index, values are copied for the keys returned and no others, and
// keys_only and count_only copy no value at all.
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
	res := RangeResult{Revision: v.rev}
	sel := newSelection(&o)
	v.s.index.visit(keyrange.Range{Key: key, End: end}, rev, func(kr keyRev) bool {
		res.Count++
		if !o.CountOnly && o.matches(kr) {
			sel.offer(kr)
		}
		return true
	})
	if o.CountOnly {
		return res, nil
	}
	krs, more, err := sel.result(v)
	if err != nil {
		return RangeResult{}, err
	}
	res.More = more
	res.KVs = make([]KeyValue, 0, len(krs))
	for _, kr := range krs {
		kv, err := v.load(kr, !o.KeysOnly, o.Limits)
		if err != nil {
			return RangeResult{}, err
		}
		res.KVs = append(res.KVs, kv)
	}
	return res, nil
}

// matches reports whether kr passes the revision filters.
func (o *RangeOptions) matches(kr keyRev) bool {
	return inBounds(kr.rev.Main, o.MinModRevision, o.MaxModRevision) &&
		inBounds(kr.created.Main, o.MinCreateRevision, o.MaxCreateRevision)
}

func inBounds(n, lo, hi int64) bool {
	return (lo == 0 || n >= lo) && (hi == 0 || n <= hi)
}

// load copies the version kr names out of the history: the key and its
// metadata, and the value when withValue is set. limits is charged before
// anything is copied.
func (v view) load(kr keyRev, withValue bool, limits *ReadLimits) (KeyValue, error) {
	hdr, value, err := v.record(kr)
	if err != nil {
		return KeyValue{}, err
	}
	if !withValue {
		value = nil
	}
	if err := limits.charge(len(hdr.key) + len(value)); err != nil {
		return KeyValue{}, err
	}
	kv := KeyValue{CreateRevision: hdr.create, ModRevision: hdr.mod, Version: hdr.version, Lease: hdr.lease}
	buf := make([]byte, len(hdr.key)+len(value))
	n := copy(buf, hdr.key)
	copy(buf[n:], value)
	kv.Key = buf[:n:n]
	if withValue {
		kv.Value = buf[n:]
	}
	return kv, nil
}
