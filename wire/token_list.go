package wire

import (
	"crypto/sha256"
	"encoding/binary"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
)

// ListPage is what a list's next_page_token holds, sealed by Tokens:
// the revision every page reads at, the key the next page starts from,
// and a digest of the range and the filters the token was issued for, so
// that it serves the same list and no other.
type ListPage struct {
	Rev     int64
	Binding [ListBindingSize]byte
	Start   []byte
}

// ListBindingSize is the size of a ListPage's binding (ListBinding).
const ListBindingSize = 16

// Payload lays the page out as: uvarint revision, binding, start key.
func (p ListPage) Payload() []byte {
	b := binary.AppendUvarint(nil, uint64(p.Rev))
	b = append(b, p.Binding[:]...)
	return append(b, p.Start...)
}

// ParseListPage reads a payload written by Payload; ok is false for
// anything else.
func ParseListPage(b []byte) (ListPage, bool) {
	rev, n := binary.Uvarint(b)
	if n <= 0 || rev == 0 || rev > 1<<62 || len(b[n:]) < ListBindingSize {
		return ListPage{}, false
	}
	p := ListPage{Rev: int64(rev), Start: b[n+ListBindingSize:]}
	copy(p.Binding[:], b[n:])
	return p, true
}

// ListBinding digests what decides which keys the pages of a list hold:
// the range and the revision filters. The order needs no place: tokens
// are issued and taken for ascending keys only. Limits and keys_only may
// change from page to page.
func ListBinding(sel keyrange.Range, o kv.RangeOptions) [ListBindingSize]byte {
	var b []byte
	b = binary.AppendUvarint(b, uint64(len(sel.Key)))
	b = append(b, sel.Key...)
	b = binary.AppendUvarint(b, uint64(len(sel.End)))
	b = append(b, sel.End...)
	for _, n := range []int64{o.MinModRevision, o.MaxModRevision, o.MinCreateRevision, o.MaxCreateRevision} {
		b = binary.AppendUvarint(b, uint64(n))
	}
	sum := sha256.Sum256(b)
	return [ListBindingSize]byte(sum[:ListBindingSize])
}

// SealListPage returns the next_page_token of p.
func (c Tokens) SealListPage(p ListPage) string {
	return c.Seal(TokenListPage, p.Payload())
}

// OpenListPage checks a page token against the list it is given for, and
// returns what it holds; a token that does not fit is a bad parameter,
// recorded in q.
// A page never leaves the range asked for (which is what is authorized):
// its start key must lie inside it.
func (c Tokens) OpenListPage(q *Query, token string, sel keyrange.Range, opts kv.RangeOptions) ListPage {
	if sel.End == nil {
		q.Failf("page_token applies to ranges, not to a single key")
		return ListPage{}
	}
	payload, err := c.Open(TokenListPage, token)
	page, ok := ParseListPage(payload)
	switch {
	case err != nil || !ok:
		q.Failf("page_token is %v", ErrBadToken)
	case page.Binding != ListBinding(sel, opts) || !sel.Contains(page.Start):
		q.Failf("page_token is not a token of this range and these filters")
	case !opts.KeyAscending():
		q.Failf("page_token needs ascending key order")
	case q.Has("revision") && opts.Revision != page.Rev:
		q.Failf("page_token is pinned to revision %d", page.Rev)
	}
	return page
}
