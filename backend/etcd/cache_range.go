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
func selectRange(walk func(visit func(*kv.KeyValue) bool), rev int64, r *kv.RangeRequest) (kv.RangeResult, error) {
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
	walk(visit)
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

// walkRange calls visit with the entries of keys in the range of key and
// end (a keyrange.Range), in key order, until visit returns false.
func walkRange(keys *btree.BTreeG[*kv.KeyValue], key, end []byte, visit func(*kv.KeyValue) bool) {
	kr := keyrange.Range{Key: key, End: end}
	switch {
	case kr.IsSingle():
		if e, ok := keys.Get(&kv.KeyValue{Key: key}); ok {
			visit(e)
		}
	case kr.IsFromKey():
		keys.AscendGreaterOrEqual(&kv.KeyValue{Key: key}, visit)
	case !kr.IsEmpty():
		keys.AscendRange(&kv.KeyValue{Key: key}, &kv.KeyValue{Key: end}, visit)
	}
}

// maxPastEvents bounds the window's events a read at a past revision
// looks through to undo: one that would need more reads etcd, so that
// the memory of a read follows its answer, not the window.
const maxPastEvents = 4096

// pastWalk returns a walk of r's range as it was at revision at: the
// cache's keys (at revision cur), with those the window's revisions after
// at changed as they were before them. It reports false when it cannot
// tell: the window does not hold every revision after at up to cur, an
// event came
// without the version before it (etcd had compacted it), or there are
// more than maxPastEvents events to undo.
func pastWalk(keys *btree.BTreeG[*kv.KeyValue], win *window, at, cur int64, r *kv.RangeRequest) (func(visit func(*kv.KeyValue) bool), bool) {
	// The cache may be ahead of the window (built from a list at a
	// revision the upstream watch had not reached): then the window
	// does not yet hold every change to undo.
	if _, end := win.bounds(); end < cur {
		return nil, false
	}
	kr := keyrange.Range{Key: r.Key, End: r.End}
	changed := map[string]bool{}
	var before []*kv.KeyValue // the versions at at of the keys changed, sorted below
	events, known := 0, true
	held := win.each(at+1, cur, func(ev *kv.Event) bool {
		if events++; events > maxPastEvents {
			known = false
			return false
		}
		if !kr.Contains(ev.KV.Key) || changed[string(ev.KV.Key)] {
			return true
		}
		changed[string(ev.KV.Key)] = true
		switch {
		case ev.PrevKV != nil:
			before = append(before, ev.PrevKV)
		case ev.Type == kv.EventPut && ev.KV.Version == 1:
			// Created after at: absent then.
		default:
			known = false
			return false
		}
		return true
	})
	if !held || !known {
		return nil, false
	}
	slices.SortFunc(before, func(a, b *kv.KeyValue) int { return bytes.Compare(a.Key, b.Key) })
	return func(visit func(*kv.KeyValue) bool) {
		i, stopped := 0, false
		// emit visits the versions before that come before key (nil: all).
		emit := func(key []byte) {
			for ; !stopped && i < len(before) && (key == nil || bytes.Compare(before[i].Key, key) < 0); i++ {
				stopped = !visit(before[i])
			}
		}
		walkRange(keys, r.Key, r.End, func(e *kv.KeyValue) bool {
			emit(e.Key)
			if stopped {
				return false
			}
			if changed[string(e.Key)] {
				return true // as it was at at: in before, or absent
			}
			stopped = !visit(e)
			return !stopped
		})
		emit(nil)
	}, true
}
