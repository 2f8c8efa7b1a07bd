package mvcc

import (
	"bytes"
	"cmp"
	"slices"
	"sync"

	"github.com/httpkv/httpkv/kv"
)

// selection picks, as the index walks a range in key order, the keys the
// range returns. It keeps no more than it needs: the first limit+1 keys in
// key order, the best limit+1 in a heap when sorting by anything but the
// value, and, to sort by value, every matching key's index entry (never
// its value) until the walk ends and the values can be read without
// holding the index.
type selection struct {
	limit int // 0: every key
	// keep bounds what a range without a limit collects: maxKeys+1, so
	// that one more than allowed is noticed. 0: no bound.
	keep    int
	maxKeys int64
	// window, when not 0, is how many keys, from the first in key order,
	// may be returned at all: etcd sorts only the first limit+1 keys of an
	// unfiltered range when the target is not the key and the order is
	// left unset (it defaults to ascending after the keys were fetched).
	window int
	// ascending: the answer is in ascending key order, the index's.
	ascending bool
	byValue   bool

	krs     []keyRev // ascending: the first keys; byValue: every match
	best    rankHeap // other sorts: the best limit+1 so far
	matched int
}

func newSelection(o *kv.RangeOptions) selection {
	s := selection{limit: int(o.Limit)}
	if o.Limit == 0 && o.Limits != nil && o.Limits.MaxKeys > 0 {
		s.maxKeys = o.Limits.MaxKeys
		s.keep = int(s.maxKeys) + 1
	}
	filtered := o.MinModRevision != 0 || o.MaxModRevision != 0 || o.MinCreateRevision != 0 || o.MaxCreateRevision != 0
	if o.SortOrder == kv.SortNone && !filtered && o.Limit > 0 {
		s.window = int(o.Limit) + 1
	}
	order := o.SortOrder
	if o.SortTarget != kv.SortByKey && order == kv.SortNone {
		order = kv.SortAscend // etcd: a target other than the key sorts ascending by default
	}
	s.ascending = o.SortTarget == kv.SortByKey && order != kv.SortDescend
	s.byValue = o.SortTarget == kv.SortByValue
	if !s.ascending {
		s.best.before = rankOrder(o.SortTarget, order)
	}
	return s
}

// offer is called for every key of the range that passes the filters, in
// key order.
func (s *selection) offer(kr keyRev) {
	s.matched++
	switch {
	case s.keep > 0 && s.matched > s.keep, s.window > 0 && s.matched > s.window:
		// Too many for a range without a limit, or past the window: the
		// walk only counts now.
	case s.ascending:
		if s.krs == nil {
			s.krs = takeKeyRevs()
		}
		if s.limit == 0 || len(s.krs) <= s.limit {
			s.krs = append(s.krs, kr)
		}
	case s.byValue:
		s.krs = append(s.krs, kr)
	default:
		s.best.offer(ranked{kr: kr}, s.limit)
	}
}

// result returns the keys to load, in answer order, and whether the limit
// left matching keys out.
func (s *selection) result(v view) ([]keyRev, bool, error) {
	if s.keep > 0 && s.matched >= s.keep {
		return nil, false, &kv.TooLargeError{MaxKeys: s.maxKeys}
	}
	more := s.limit > 0 && s.matched > s.limit
	if s.ascending {
		return s.krs[:min(len(s.krs), s.limitOr(len(s.krs)))], more, nil
	}
	if s.byValue {
		// The values alias the read transaction's pages: only the ones
		// returned are copied, by load.
		for _, kr := range s.krs {
			_, value, err := v.record(kr)
			if err != nil {
				return nil, false, err
			}
			s.best.offer(ranked{kr: kr, value: value}, s.limit)
		}
		s.krs = nil
	}
	items := s.best.items
	slices.SortFunc(items, s.best.before)
	items = items[:min(len(items), s.limitOr(len(items)))]
	out := make([]keyRev, len(items))
	for i := range items {
		out[i] = items[i].kr
	}
	return out, more, nil
}

func (s *selection) limitOr(n int) int {
	if s.limit > 0 {
		return s.limit
	}
	return n
}

// ranked is a candidate of a sorted range; value is set only to sort by
// value.
type ranked struct {
	kr    keyRev
	value []byte
}

// rankOrder returns the answer order of a sort: by target in the given
// direction, ties in ascending key order (as a stable sort of the index's
// order would leave them).
func rankOrder(target kv.SortTarget, order kv.SortOrder) func(a, b ranked) int {
	// Candidates are passed by value: a pointer passed to a function
	// value escapes, which would allocate two candidates per comparison.
	var by func(a, b ranked) int
	switch target {
	case kv.SortByVersion:
		by = func(a, b ranked) int { return cmp.Compare(a.kr.version, b.kr.version) }
	case kv.SortByCreate:
		by = func(a, b ranked) int { return cmp.Compare(a.kr.created.Main, b.kr.created.Main) }
	case kv.SortByMod:
		by = func(a, b ranked) int { return cmp.Compare(a.kr.rev.Main, b.kr.rev.Main) }
	case kv.SortByValue:
		by = func(a, b ranked) int { return bytes.Compare(a.value, b.value) }
	default:
		by = func(a, b ranked) int { return 0 }
	}
	sign := 1
	if order == kv.SortDescend {
		sign = -1
	}
	return func(a, b ranked) int {
		if c := by(a, b); c != 0 {
			return sign * c
		}
		if target == kv.SortByKey {
			return sign * bytes.Compare(a.kr.key, b.kr.key)
		}
		return bytes.Compare(a.kr.key, b.kr.key)
	}
}

// rankHeap keeps the best n candidates seen: a binary heap whose root is
// the worst kept, which a better newcomer replaces. (Hand-written rather
// than container/heap, whose interface would move every range's selection
// to the heap.)
type rankHeap struct {
	items  []ranked
	before func(a, b ranked) int
}

// offer keeps c if it is among the best limit+1 so far (every candidate
// for limit 0).
func (h *rankHeap) offer(c ranked, limit int) {
	if limit == 0 || len(h.items) <= limit {
		h.items = append(h.items, c)
		h.up(len(h.items) - 1)
		return
	}
	if h.before(c, h.items[0]) < 0 {
		h.items[0] = c
		h.down(0)
	}
}

// worse reports whether item i ranks after item j: the root is the worst.
func (h *rankHeap) worse(i, j int) bool { return h.before(h.items[i], h.items[j]) > 0 }

func (h *rankHeap) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !h.worse(i, parent) {
			return
		}
		h.items[i], h.items[parent] = h.items[parent], h.items[i]
		i = parent
	}
}

func (h *rankHeap) down(i int) {
	for {
		worst, l, r := i, 2*i+1, 2*i+2
		if l < len(h.items) && h.worse(l, worst) {
			worst = l
		}
		if r < len(h.items) && h.worse(r, worst) {
			worst = r
		}
		if worst == i {
			return
		}
		h.items[i], h.items[worst] = h.items[worst], h.items[i]
		i = worst
	}
}

// maxPooledKeyRevs bounds the index entries keyRevPool keeps a slice for:
// a page of the largest limit the HTTP API allows, and one more.
const maxPooledKeyRevs = 10001

// keyRevPool keeps the slices selections collect the keys of a range in,
// for the next range: grown by doubling, a 1,000-key range's cost it 128
// KiB of garbage each time.
var keyRevPool sync.Pool // of *[]keyRev

// takeKeyRevs returns an empty slice, from the pool when it has one.
func takeKeyRevs() []keyRev {
	if p, ok := keyRevPool.Get().(*[]keyRev); ok {
		return *p
	}
	return nil
}

// release gives the selection's slice back to the pool, once the keys
// result returned have been read. The selection is not used again.
func (s *selection) release() {
	krs := s.krs
	s.krs = nil
	if cap(krs) == 0 || cap(krs) > maxPooledKeyRevs {
		return
	}
	clear(krs) // the keys alias the index: let the collector have them
	krs = krs[:0]
	keyRevPool.Put(&krs)
}
