package etcd

import (
	"bytes"
	"cmp"
	"slices"

	"github.com/google/btree"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
)

// selectRange answers r from keys, the namespace at revision rev, as
// etcd answers a range (its apply's Range): the count is of the whole
// range; the revision filters drop keys before the sort; a range sorted
// by anything but the key with its order left unset, unfiltered and
// limited, sorts only the first limit+1 keys in key order; ties keep key
// order. The answer shares the cache's keys and values, which nothing
// changes.
func selectRange(keys *btree.BTreeG[*kv.KeyValue], rev int64, r *kv.RangeRequest) (kv.RangeResult, error) {
	o := &r.Options
	res := kv.RangeResult{Revision: rev}
	filtered := o.MinModRevision != 0 || o.MaxModRevision != 0 || o.MinCreateRevision != 0 || o.MaxCreateRevision != 0
	order := o.SortOrder
	if o.SortTarget != kv.SortByKey && order == kv.SortNone {
		order = kv.SortAscend
	}
	keyOrder := o.SortTarget == kv.SortByKey && order != kv.SortDescend
	// keep is how many matches to collect in key order, 0 for all: the
	// first limit+1 tell the answer and whether there is more.
	keep := 0
	if o.Limit > 0 && (keyOrder || o.SortOrder == kv.SortNone && !filtered) {
		keep = int(o.Limit) + 1
	}
	var maxKeys int
	if o.Limit == 0 && o.Limits != nil && o.Limits.MaxKeys > 0 {
		maxKeys = int(o.Limits.MaxKeys)
	}
	from := r.Key
	if r.From != nil {
		from = r.From
	}
	// A sorted range with a limit keeps no more than twice the limit+1
	// best: past that, the best limit+1 are sorted out and the rest
	// dropped, so that a request's memory follows its limit, not the
	// namespace.
	var before func(a, b *kv.KeyValue) int
	if !keyOrder {
		before = answerOrder(o.SortTarget, order)
	}
	var matched []*kv.KeyValue
	var n int
	tooMany := false
	visit := func(e *kv.KeyValue) bool {
		res.Count++
		if o.CountOnly || (keep > 0 && len(matched) == keep) || bytes.Compare(e.Key, from) < 0 || !passes(o, e) {
			return true
		}
		if maxKeys > 0 && len(matched) == maxKeys {
			tooMany = true
			return false
		}
		n++
		matched = append(matched, e)
		if before != nil && o.Limit > 0 && len(matched) == 2*int(o.Limit+1) {
			slices.SortFunc(matched, before)
			clear(matched[o.Limit+1:])
			matched = matched[:o.Limit+1]
		}
		return true
	}
	kr := keyrange.Range{Key: r.Key, End: r.End}
	switch {
	case kr.IsSingle():
		if e, ok := keys.Get(&kv.KeyValue{Key: r.Key}); ok {
			visit(e)
		}
	case kr.IsFromKey():
		keys.AscendGreaterOrEqual(&kv.KeyValue{Key: r.Key}, visit)
	case !kr.IsEmpty():
		keys.AscendRange(&kv.KeyValue{Key: r.Key}, &kv.KeyValue{Key: r.End}, visit)
	}
	if tooMany {
		return kv.RangeResult{}, &kv.TooLargeError{MaxKeys: o.Limits.MaxKeys}
	}
	if o.CountOnly {
		return res, nil
	}
	if before != nil {
		slices.SortFunc(matched, before)
	}
	if o.Limit > 0 && n > int(o.Limit) {
		matched, res.More = matched[:o.Limit], true
	}
	res.KVs = make([]kv.KeyValue, len(matched))
	for i, e := range matched {
		res.KVs[i] = *e
		if o.KeysOnly {
			res.KVs[i].Value = nil
		}
		if err := o.Limits.Charge(len(e.Key) + len(res.KVs[i].Value)); err != nil {
			return kv.RangeResult{}, err
		}
	}
	return res, nil
}

// passes reports whether e passes the range's revision filters.
func passes(o *kv.RangeOptions, e *kv.KeyValue) bool {
	return (o.MinModRevision == 0 || e.ModRevision >= o.MinModRevision) &&
		(o.MaxModRevision == 0 || e.ModRevision <= o.MaxModRevision) &&
		(o.MinCreateRevision == 0 || e.CreateRevision >= o.MinCreateRevision) &&
		(o.MaxCreateRevision == 0 || e.CreateRevision <= o.MaxCreateRevision)
}

// answerOrder orders keys by target in the given direction, ties in
// ascending key order (as a stable sort of a range in key order leaves
// them).
func answerOrder(target kv.SortTarget, order kv.SortOrder) func(a, b *kv.KeyValue) int {
	sign := 1
	if order == kv.SortDescend {
		sign = -1
	}
	return func(a, b *kv.KeyValue) int {
		var c int
		switch target {
		case kv.SortByKey:
			c = bytes.Compare(a.Key, b.Key)
		case kv.SortByVersion:
			c = cmp.Compare(a.Version, b.Version)
		case kv.SortByCreate:
			c = cmp.Compare(a.CreateRevision, b.CreateRevision)
		case kv.SortByMod:
			c = cmp.Compare(a.ModRevision, b.ModRevision)
		case kv.SortByValue:
			c = bytes.Compare(a.Value, b.Value)
		}
		if c == 0 && target != kv.SortByKey {
			return bytes.Compare(a.Key, b.Key)
		}
		return sign * c
	}
}
