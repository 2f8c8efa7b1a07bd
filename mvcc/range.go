package mvcc

import (
	"fmt"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
)

// view reads the store at one revision through one bbolt transaction.
type view struct {
	s    *Store
	keys records
	rev  int64 // the revision the view is current at
}

// checkRev resolves a requested read revision against the view.
func (v view) checkRev(rev int64) (int64, error) {
	if rev > v.rev {
		return 0, kv.FutureRevision("revision", rev, v.rev)
	}
	if rev <= 0 {
		rev = v.rev
	}
	if rev < v.s.compactRev {
		return 0, &kv.CompactedError{CompactRevision: v.s.compactRev}
	}
	return rev, nil
}

// get reads the version of kr from the history.
func (v view) get(kr keyRev) (kv.KeyValue, error) {
	raw, err := v.raw(kr)
	if err != nil {
		return kv.KeyValue{}, err
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
func (v view) current(key []byte) (kv.KeyValue, bool, error) {
	kr, err := v.s.index.get(key, v.rev)
	if err != nil {
		return kv.KeyValue{}, false, nil
	}
	item, err := v.get(kr)
	return item, err == nil, err
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
func (v view) rangeKV(key, end []byte, o kv.RangeOptions) (kv.RangeResult, error) {
	return v.rangeKeys(key, end, o, true)
}

// rangeKeys is rangeKV. Unless copies is set, the keys and values of the
// result alias the pages of the view's transaction and its KVs come from
// kvsPool: the caller uses them before the transaction ends, and gives
// the slice back with releaseKVs.
func (v view) rangeKeys(key, end []byte, o kv.RangeOptions, copies bool) (kv.RangeResult, error) {
	if len(key) == 0 {
		return kv.RangeResult{}, invalidf("empty key")
	}
	if err := o.Validate(); err != nil {
		return kv.RangeResult{}, err
	}
	rev, err := v.checkRev(o.Revision)
	if err != nil {
		return kv.RangeResult{}, err
	}
	res := kv.RangeResult{Revision: v.rev}
	sel := newSelection(&o)
	v.s.index.visit(keyrange.Range{Key: key, End: end}, rev, func(kr keyRev) bool {
		res.Count++
		if !o.CountOnly && matches(&o, kr) {
			sel.offer(kr)
		}
		return true
	})
	if o.CountOnly {
		return res, nil
	}
	krs, more, err := sel.result(v)
	defer sel.release()
	if err != nil {
		return kv.RangeResult{}, err
	}
	res.More = more
	if err := v.loadAll(&res, krs, !o.KeysOnly, o.Limits, copies); err != nil {
		return kv.RangeResult{}, err
	}
	return res, nil
}

// matches reports whether kr passes the revision filters.
func matches(o *kv.RangeOptions, kr keyRev) bool {
	return inBounds(kr.rev.Main, o.MinModRevision, o.MaxModRevision) &&
		inBounds(kr.created.Main, o.MinCreateRevision, o.MaxCreateRevision)
}

func inBounds(n, lo, hi int64) bool {
	return (lo == 0 || n >= lo) && (hi == 0 || n <= hi)
}
