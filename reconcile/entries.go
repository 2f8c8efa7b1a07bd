package reconcile

import (
	"bytes"
	"slices"
	"strconv"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
)

// Entries are the keys and values an import wants, sorted by key, each
// key once, all in one buffer: a million small keys cost the buffer and
// 24 bytes each, not two slices and their headers each. They implement
// kv.Entries.
type Entries struct {
	buf  []byte
	refs []entryRef
}

// entryRef locates one key and its value in the buffer: the key at off,
// the value right after it.
type entryRef struct {
	off      int
	keyLen   uint32
	valueLen uint32
	line     uint32 // where the entry came from, for errors
}

// Len is the number of keys.
func (e *Entries) Len() int { return len(e.refs) }

// At returns the i-th key in key order and its value.
func (e *Entries) At(i int) (key, value []byte) {
	r := &e.refs[i]
	k := r.off + int(r.keyLen)
	v := k + int(r.valueLen)
	return e.buf[r.off:k:k], e.buf[k:v:v]
}

// Line returns the line the i-th key came from.
func (e *Entries) Line(i int) int { return int(e.refs[i].line) }

// Builder collects the entries of an import, each checked as it comes.
// The zero Builder takes any key; NewBuilder confines them to a scope.
type Builder struct {
	scope keyrange.Range
	e     Entries
}

// NewBuilder returns a Builder of entries whose keys must lie in scope.
func NewBuilder(scope keyrange.Range) *Builder {
	return &Builder{scope: scope}
}

// Add appends the entry of a line; key and value are copied. It refuses
// an empty key or one outside the scope, naming the line.
func (b *Builder) Add(key, value []byte, line int) error {
	switch {
	case len(key) == 0:
		return kv.Invalidf("line %d: the key is empty", line)
	case b.scope.Key != nil && !b.scope.Contains(key):
		return kv.Invalidf("line %d: the key %q is outside the range the import names (%s): widen the range, or leave the key out", line, key, describe(b.scope))
	case uint64(len(key)) > maxLen || uint64(len(value)) > maxLen:
		return kv.Invalidf("line %d: the key or value is larger than 4 GiB", line)
	}
	r := entryRef{off: len(b.e.buf), keyLen: uint32(len(key)), valueLen: uint32(len(value)), line: uint32(line)}
	b.e.buf = append(append(b.e.buf, key...), value...)
	b.e.refs = append(b.e.refs, r)
	return nil
}

// maxLen is the most bytes of a key or a value an entry records.
const maxLen = 1<<32 - 1

// Finish sorts the entries by key and returns them; a key given twice is
// an error naming both lines. The Builder is not to be used afterwards.
func (b *Builder) Finish() (*Entries, error) {
	e := &Entries{buf: b.e.buf, refs: b.e.refs}
	b.e = Entries{}
	keyOf := func(r *entryRef) []byte { return e.buf[r.off : r.off+int(r.keyLen)] }
	cmp := func(a, b entryRef) int {
		if c := bytes.Compare(keyOf(&a), keyOf(&b)); c != 0 {
			return c
		}
		return int(a.line) - int(b.line)
	}
	// An export is already in key order: check before sorting.
	if !slices.IsSortedFunc(e.refs, cmp) {
		slices.SortFunc(e.refs, cmp)
	}
	for i := 1; i < len(e.refs); i++ {
		if bytes.Equal(keyOf(&e.refs[i-1]), keyOf(&e.refs[i])) {
			return nil, kv.Invalidf("lines %d and %d both give the key %q: give each key once",
				e.refs[i-1].line, e.refs[i].line, keyOf(&e.refs[i]))
		}
	}
	return e, nil
}

// describe names a range for a message.
func describe(r keyrange.Range) string {
	switch {
	case r.IsSingle():
		return "the key " + quote(r.Key)
	case r.IsFromKey():
		if len(r.Key) == 1 && r.Key[0] == 0 {
			return "every key"
		}
		return "every key from " + quote(r.Key)
	case bytes.Equal(r.End, keyrange.PrefixEnd(r.Key)):
		return "the prefix " + quote(r.Key)
	}
	return "[" + quote(r.Key) + ", " + quote(r.End) + ")"
}

func quote(b []byte) string { return strconv.Quote(string(b)) }
