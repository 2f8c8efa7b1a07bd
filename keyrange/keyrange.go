package keyrange

import "bytes"

// Range is a set of keys in etcd's encoding; see the package
// documentation for what End means.
type Range struct {
	Key, End []byte
}

// Single is the range of the key k alone.
func Single(k []byte) Range { return Range{Key: k} }

// FromKey is the range of every key >= k.
func FromKey(k []byte) Range { return Range{Key: k, End: []byte{0}} }

// Between is the range [k, end); end must not be empty (that would be
// the single key k) and "\x00" means no upper bound.
func Between(k, end []byte) Range { return Range{Key: k, End: end} }

// All is the range of every key.
func All() Range { return Range{Key: []byte{0}, End: []byte{0}} }

// Prefix is the range of every key starting with p; the empty prefix is
// every key.
func Prefix(p []byte) Range {
	if len(p) == 0 {
		return All()
	}
	return Range{Key: p, End: PrefixEnd(p)}
}

// PrefixEnd returns the end of the range of keys starting with p: p with
// its last byte below 0xff incremented and what follows dropped, or
// "\x00" (no upper bound) when every byte of p is 0xff. The result is a
// new slice.
func PrefixEnd(p []byte) []byte {
	end := bytes.Clone(p)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return []byte{0}
}

// IsSingle reports whether r is one key.
func (r Range) IsSingle() bool { return len(r.End) == 0 }

// IsFromKey reports whether r has no upper bound: every key >= Key.
func (r Range) IsFromKey() bool { return len(r.End) == 1 && r.End[0] == 0 }

// IsEmpty reports whether r holds no key: an explicit End at or below Key.
func (r Range) IsEmpty() bool {
	return !r.IsSingle() && !r.IsFromKey() && bytes.Compare(r.End, r.Key) <= 0
}

// Limit returns r's exclusive upper bound as a plain interval sees it:
// End for an explicit end, nil (+infinity) for a from-key range, and Key
// followed by a zero byte for a single key (no key lies strictly between
// k and k+"\x00"). Only the single key's bound is a new slice.
func (r Range) Limit() []byte {
	switch {
	case r.IsSingle():
		return append(append(make([]byte, 0, len(r.Key)+1), r.Key...), 0)
	case r.IsFromKey():
		return nil
	}
	return r.End
}

// Contains reports whether key lies in r.
func (r Range) Contains(key []byte) bool {
	if r.IsSingle() {
		return bytes.Equal(key, r.Key)
	}
	return bytes.Compare(key, r.Key) >= 0 && (r.IsFromKey() || bytes.Compare(key, r.End) < 0)
}

// Covers reports whether every key of o lies in r. An empty o is covered
// by anything.
func (r Range) Covers(o Range) bool {
	switch {
	case o.IsEmpty():
		return true
	case o.IsSingle():
		return r.Contains(o.Key)
	}
	return bytes.Compare(r.Key, o.Key) <= 0 && CompareLimits(o.Limit(), r.Limit()) <= 0
}

// Overlaps reports whether some key lies in both r and o.
func (r Range) Overlaps(o Range) bool {
	switch {
	case r.IsEmpty() || o.IsEmpty():
		return false
	case r.IsSingle():
		return o.Contains(r.Key)
	case o.IsSingle():
		return r.Contains(o.Key)
	}
	// [a1, b1) and [a2, b2) meet when a1 < b2 and a2 < b1.
	return AboveKey(o.Limit(), r.Key) && AboveKey(r.Limit(), o.Key)
}

// CompareLimits orders two exclusive upper bounds as Limit returns them,
// nil (+infinity) after every other.
func CompareLimits(a, b []byte) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	return bytes.Compare(a, b)
}

// AboveKey reports whether the exclusive upper bound limit (nil for
// +infinity) lies above key, so that key may lie below it.
func AboveKey(limit, key []byte) bool {
	return limit == nil || bytes.Compare(limit, key) > 0
}
