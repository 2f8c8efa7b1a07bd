package httpapi

import (
	"bytes"
	"encoding/binary"
	"math"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
)

// historyToken is where the next page of a history read starts, and the
// read it belongs to: the window the first page fixed, the order and the
// filters. The key range is the token's binding.
type historyToken struct {
	start, end int64
	next       kv.Revision
	descend    bool
	noPut      bool
	noDelete   bool
}

// appendBinding appends sel to b, length-prefixed, an absent end told
// from any present one.
func appendBinding(b []byte, sel keyrange.Range) []byte {
	b = binary.AppendUvarint(b, uint64(len(sel.Key)))
	b = append(b, sel.Key...)
	if sel.End == nil {
		return append(b, 0)
	}
	b = binary.AppendUvarint(append(b, 1), uint64(len(sel.End)))
	return append(b, sel.End...)
}

const (
	historyDescend byte = 1 << iota
	historyNoPut
	historyNoDelete
	historyFlags = historyDescend | historyNoPut | historyNoDelete
)

// sealHistory returns the token of t. The key range it belongs to is
// sealed in with it but checked, not read, when it comes back: a token
// presented with any other range is refused.
func (c tokenCodec) sealHistory(t historyToken, sel keyrange.Range) string {
	var b []byte
	for _, n := range []int64{t.start, t.end, t.next.Main, t.next.Sub} {
		b = binary.AppendUvarint(b, uint64(n))
	}
	var flags byte
	if t.descend {
		flags |= historyDescend
	}
	if t.noPut {
		flags |= historyNoPut
	}
	if t.noDelete {
		flags |= historyNoDelete
	}
	return c.seal(tokenKindHistory, appendBinding(append(b, flags), sel))
}

// openHistory returns the position a token of sealHistory holds, if it
// was sealed for sel.
func (c tokenCodec) openHistory(token string, sel keyrange.Range) (historyToken, bool) {
	b, err := c.open(tokenKindHistory, token)
	if err != nil {
		return historyToken{}, false
	}
	var n [4]int64
	for i := range n {
		v, size := binary.Uvarint(b)
		if size <= 0 || v > math.MaxInt64 {
			return historyToken{}, false
		}
		n[i], b = int64(v), b[size:]
	}
	if len(b) < 1 || b[0]&^historyFlags != 0 || !bytes.Equal(b[1:], appendBinding(nil, sel)) {
		return historyToken{}, false
	}
	return historyToken{
		start: n[0], end: n[1], next: kv.Revision{Main: n[2], Sub: n[3]},
		descend: b[0]&historyDescend != 0, noPut: b[0]&historyNoPut != 0, noDelete: b[0]&historyNoDelete != 0,
	}, true
}
