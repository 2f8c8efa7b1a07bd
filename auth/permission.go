package auth

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/httpkv/httpkv/keyrange"
)

// Access is the kind of access a permission grants.
type Access int

const (
	Read      Access = 1
	Write     Access = 2
	ReadWrite Access = Read | Write
)

// accessNames are the names of the kinds of access, as the API and etcd
// spell them.
var accessNames = [...]string{Read: "read", Write: "write", ReadWrite: "readwrite"}

// String returns the access's name: read, write or readwrite.
func (a Access) String() string {
	if a < Read || a > ReadWrite {
		return fmt.Sprintf("Access(%d)", int(a))
	}
	return accessNames[a]
}

// ParseAccess returns the access named s (read, write or readwrite), and
// whether there is one.
func ParseAccess(s string) (Access, bool) {
	for a := Read; a <= ReadWrite; a++ {
		if accessNames[a] == s {
			return a, true
		}
	}
	return 0, false
}

// Permission grants access to the keys of a keyrange.Range: Key and End
// are its fields (kept apart here because they are stored as they are).
type Permission struct {
	Key    []byte
	End    []byte
	Access Access
}

// Range returns the keys the permission grants access to.
func (p Permission) Range() keyrange.Range { return keyrange.Range{Key: p.Key, End: p.End} }

// span is a range in plain interval form, for merging: [start, end), end
// being the range's keyrange Limit (nil for +infinity).
type span struct{ start, end []byte }

// toSpan turns a (key, end) selection, a keyrange.Range, into its span.
func toSpan(key, end []byte) span {
	r := keyrange.Range{Key: key, End: end}
	return span{start: r.Key, end: r.Limit()}
}

// endBefore reports a < b for span ends, nil being +infinity.
func endBefore(a, b []byte) bool { return keyrange.CompareLimits(a, b) < 0 }

// coverage is the union of a user's permission spans of one access kind,
// merged into disjoint spans sorted by start.
type coverage []span

func newCoverage(spans []span) coverage {
	slices.SortFunc(spans, func(a, b span) int { return bytes.Compare(a.start, b.start) })
	var out coverage
	for _, s := range spans {
		if s.end != nil && bytes.Compare(s.start, s.end) >= 0 {
			continue // empty
		}
		if n := len(out); n > 0 && !endBefore(out[n-1].end, s.start) {
			// Overlaps or touches the last: extend it.
			if endBefore(out[n-1].end, s.end) {
				out[n-1].end = s.end
			}
			continue
		}
		out = append(out, s)
	}
	return out
}

// covers reports whether every key of want lies in the coverage.
func (c coverage) covers(want span) bool {
	if want.end != nil && bytes.Compare(want.start, want.end) >= 0 {
		return true // an empty range touches nothing
	}
	// The merged spans are disjoint and do not touch, so want must lie in
	// one of them: the last one starting at or before want's start.
	i, found := slices.BinarySearchFunc(c, want.start, func(s span, k []byte) int { return bytes.Compare(s.start, k) })
	if !found {
		i--
	}
	if i < 0 {
		return false
	}
	s := c[i]
	return !endBefore(s.end, want.end) && keyrange.AboveKey(s.end, want.start)
}

// coversSel reports whether every key of the selection (key, end), as
// Permission reads them, lies in the coverage. A single key, the common
// case, is looked up without building its span.
func (c coverage) coversSel(key, end []byte) bool {
	if len(end) == 0 {
		return c.coversKey(key)
	}
	return c.covers(toSpan(key, end))
}

// coversKey reports whether the single key k lies in the coverage. Its
// span is [k, k+"\x00"), and no key lies strictly between k and
// k+"\x00", so it lies in a span exactly when k does.
func (c coverage) coversKey(k []byte) bool {
	i, found := slices.BinarySearchFunc(c, k, func(s span, k []byte) int { return bytes.Compare(s.start, k) })
	if !found {
		i--
	}
	return i >= 0 && keyrange.AboveKey(c[i].end, k)
}
