package wire

import (
	"bytes"
	"encoding/binary"
	"math"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
)

// HistoryToken is where the next page of a history read starts, and the
// read it belongs to: the window the first page fixed, the order and the
// filters. The key range is the token's binding.
type HistoryToken struct {
	// Start and End are the window of revisions the first page fixed.
	Start, End int64
	// Next is where the next page starts.
	Next kv.Revision
	// Descend, NoPut and NoDelete are the read's order and filters.
	Descend  bool
	NoPut    bool
	NoDelete bool
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

// SealHistory returns the token of t. The key range it belongs to is
// sealed in with it but checked, not read, when it comes back: a token
// presented with any other range is refused.
func (c Tokens) SealHistory(t HistoryToken, sel keyrange.Range) string {
	var b []byte
	for _, n := range []int64{t.Start, t.End, t.Next.Main, t.Next.Sub} {
		b = binary.AppendUvarint(b, uint64(n))
	}
	var flags byte
	if t.Descend {
		flags |= historyDescend
	}
	if t.NoPut {
		flags |= historyNoPut
	}
	if t.NoDelete {
		flags |= historyNoDelete
	}
	return c.Seal(TokenHistory, appendBinding(append(b, flags), sel))
}

// OpenHistory returns the position a token of SealHistory holds, if it
// was sealed for sel.
func (c Tokens) OpenHistory(token string, sel keyrange.Range) (HistoryToken, bool) {
	b, err := c.Open(TokenHistory, token)
	if err != nil {
		return HistoryToken{}, false
	}
	var n [4]int64
	for i := range n {
		v, size := binary.Uvarint(b)
		if size <= 0 || v > math.MaxInt64 {
			return HistoryToken{}, false
		}
		n[i], b = int64(v), b[size:]
	}
	if len(b) < 1 || b[0]&^historyFlags != 0 || !bytes.Equal(b[1:], appendBinding(nil, sel)) {
		return HistoryToken{}, false
	}
	return HistoryToken{
		Start: n[0], End: n[1], Next: kv.Revision{Main: n[2], Sub: n[3]},
		Descend: b[0]&historyDescend != 0, NoPut: b[0]&historyNoPut != 0, NoDelete: b[0]&historyNoDelete != 0,
	}, true
}
