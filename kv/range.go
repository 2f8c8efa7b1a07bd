package kv

import "fmt"

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

// Validate checks the options as etcd does.
func (o *RangeOptions) Validate() error {
	if o.SortTarget < SortByKey || o.SortTarget > SortByValue {
		return Invalidf("unknown sort target %d", o.SortTarget)
	}
	if o.SortOrder < SortNone || o.SortOrder > SortDescend {
		return Invalidf("unknown sort order %d", o.SortOrder)
	}
	if o.Limit < 0 {
		return Invalidf("limit must not be negative, not %d", o.Limit)
	}
	if o.Revision < 0 {
		return Invalidf("revision must not be negative, not %d", o.Revision)
	}
	return nil
}

// KeyAscending reports whether the options return keys in ascending key
// order, the only order pages of a list can follow.
func (o *RangeOptions) KeyAscending() bool {
	return o.SortTarget == SortByKey && o.SortOrder != SortDescend
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

// RangeRequest is one page of a range: the keys of Key and End (a
// keyrange.Range) read with Options, starting at From when From is set.
type RangeRequest struct {
	Key, End []byte
	Options  RangeOptions
	// From, when set, is the key the page starts at (a key inside the
	// range): the keys before it were read by earlier pages. Count is
	// still the count of the whole range, so that every page of a list
	// reports the same.
	From []byte
}

// ErrTooLarge: a range would return more than its ReadLimits allow. The
// concrete error is a *TooLargeError naming the limit. Nothing was
// written: a txn with such a range fails whole.
var ErrTooLarge = Errorf(ErrInvalidArgument, "the range's answer is too large: give it a limit and page through the rest")

// TooLargeError names the limit a range went past.
type TooLargeError struct {
	// MaxKeys is set when a range without a limit matched more keys than
	// ReadLimits.MaxKeys.
	MaxKeys int64
	// MaxBytes is set when the ranges of one answer would return more than
	// ReadLimits.MaxBytes.
	MaxBytes int64
}

func (e *TooLargeError) Error() string {
	if e.MaxKeys > 0 {
		return fmt.Sprintf("a range without a limit matched more than %d keys: give it a limit of at most %d and page through the rest", e.MaxKeys, e.MaxKeys)
	}
	return fmt.Sprintf("the answer would hold more than %d bytes of keys and values: ask for fewer keys with limit, or for keys_only or count_only", e.MaxBytes)
}

// ErrorCode returns CodeInvalidArgument.
func (e *TooLargeError) ErrorCode() Code { return CodeInvalidArgument }

// Unwrap makes errors.Is(err, ErrTooLarge) and errors.Is(err,
// ErrInvalidArgument) hold.
func (e *TooLargeError) Unwrap() error { return ErrTooLarge }

// KeyOverhead is what each key a range returns counts for against
// ReadLimits.MaxBytes besides its key and value bytes: about what its
// metadata takes in an answer.
const KeyOverhead = 64

// ReadLimits bounds what the ranges of one answer copy out of the store, so
// that no request makes the server build an answer of unbounded size (one
// txn of 128 ranges over a large prefix could otherwise ask for gigabytes).
// The ranges of one answer run one after another on one goroutine; a
// ReadLimits is not safe for concurrent use.
type ReadLimits struct {
	// MaxKeys bounds the keys a range without a Limit returns: one that
	// matches more fails with a *TooLargeError. 0: no bound.
	MaxKeys int64
	// MaxBytes bounds the key and value bytes the ranges sharing these
	// limits return, each key counting KeyOverhead bytes more; the range
	// that would go past it fails with a *TooLargeError before copying
	// anything more. 0: no bound.
	MaxBytes int64
	// Hold, when set, is told of each key before it is copied, with the
	// bytes it counts for (its key and value bytes and KeyOverhead); an
	// error from it ends the range with that error. It lets a caller bound
	// the memory of the answers being built by all requests at once, which
	// MaxBytes, one answer's bound, cannot.
	Hold func(n int64) error

	used int64
}

// Reserve tells Hold of n bytes a read holds before its keys are known
// (an answer that arrives whole, as an etcd read in one piece does); they
// count against Hold's bound, not MaxBytes, until the answer is sent. A
// nil ReadLimits, or one without Hold, reserves nothing.
func (l *ReadLimits) Reserve(n int64) error {
	if l == nil || l.Hold == nil || n <= 0 {
		return nil
	}
	return l.Hold(n)
}

// Charge counts one more key of n key and value bytes, and fails with a
// *TooLargeError once the keys counted pass MaxBytes, or with Hold's
// error. A nil ReadLimits bounds nothing.
func (l *ReadLimits) Charge(n int) error {
	if l == nil {
		return nil
	}
	size := int64(n) + KeyOverhead
	l.used += size
	if l.MaxBytes > 0 && l.used > l.MaxBytes {
		return &TooLargeError{MaxBytes: l.MaxBytes}
	}
	if l.Hold != nil {
		return l.Hold(size)
	}
	return nil
}
