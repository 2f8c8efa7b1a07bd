package httpapi

import (
	"crypto/sha256"
	"encoding/binary"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
)

// listPage is what a list's next_page_token holds, sealed by the
// handler's token codec: the revision every page reads at, the key the
// next page starts from, and a digest of the range and the filters the
// token was issued for, so that it serves the same list and no other.
type listPage struct {
	rev     int64
	binding [listBindingSize]byte
	start   []byte
}

const listBindingSize = 16

// payload lays the page out as: uvarint revision, binding, start key.
func (p listPage) payload() []byte {
	b := binary.AppendUvarint(nil, uint64(p.rev))
	b = append(b, p.binding[:]...)
	return append(b, p.start...)
}

// parseListPage reads a payload written by payload.
func parseListPage(b []byte) (listPage, bool) {
	rev, n := binary.Uvarint(b)
	if n <= 0 || rev == 0 || rev > 1<<62 || len(b[n:]) < listBindingSize {
		return listPage{}, false
	}
	p := listPage{rev: int64(rev), start: b[n+listBindingSize:]}
	copy(p.binding[:], b[n:])
	return p, true
}

// listBinding digests what decides which keys the pages of a list hold:
// the range and the revision filters. The order needs no place: tokens
// are issued and taken for ascending keys only. Limits and keys_only may
// change from page to page.
func listBinding(sel keyrange.Range, o kv.RangeOptions) [listBindingSize]byte {
	var b []byte
	b = binary.AppendUvarint(b, uint64(len(sel.Key)))
	b = append(b, sel.Key...)
	b = binary.AppendUvarint(b, uint64(len(sel.End)))
	b = append(b, sel.End...)
	for _, n := range []int64{o.MinModRevision, o.MaxModRevision, o.MinCreateRevision, o.MaxCreateRevision} {
		b = binary.AppendUvarint(b, uint64(n))
	}
	sum := sha256.Sum256(b)
	return [listBindingSize]byte(sum[:listBindingSize])
}

// openListPage checks a page token against the list it is given for, and
// returns what it holds; a token that does not fit is a bad parameter.
// A page never leaves the range asked for (which is what is authorized):
// its start key must lie inside it.
func (h *Handler) openListPage(q *query, token string, sel keyrange.Range, opts kv.RangeOptions) listPage {
	if sel.End == nil {
		q.fail("page_token applies to ranges, not to a single key")
		return listPage{}
	}
	payload, err := h.tokens.open(tokenKindListPage, token)
	page, ok := parseListPage(payload)
	switch {
	case err != nil || !ok:
		q.fail("page_token is %v", errBadToken)
	case page.binding != listBinding(sel, opts) || !sel.Contains(page.start):
		q.fail("page_token is not a token of this range and these filters")
	case !opts.KeyAscending():
		q.fail("page_token needs ascending key order")
	case q.has("revision") && opts.Revision != page.rev:
		q.fail("page_token is pinned to revision %d", page.rev)
	}
	return page
}
