package wire

import (
	"testing"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
)

// FuzzHistoryToken: no string opens as a token but one sealed by the same
// key for the same range, and every sealed token opens to what it holds.
func FuzzHistoryToken(f *testing.F) {
	s := NewTokens([]byte("fuzz"))
	sel := keyrange.Range{Key: []byte("a"), End: []byte("b")}
	f.Add(s.SealHistory(HistoryToken{Start: 1, End: 9, Next: kv.Revision{Main: 3, Sub: 1}, Descend: true}, sel), int64(1), int64(9), int64(3), int64(1), uint8(1))
	f.Add("AQ", int64(0), int64(0), int64(0), int64(0), uint8(0))
	f.Add("", int64(5), int64(1<<62), int64(7), int64(1<<62), uint8(7))
	f.Fuzz(func(t *testing.T, raw string, start, end, main, sub int64, flags uint8) {
		if tok, ok := s.OpenHistory(raw, sel); ok {
			if again := s.SealHistory(tok, sel); again != raw {
				t.Fatalf("openHistory(%q) = %+v, which seals to %q", raw, tok, again)
			}
		}
		if start < 0 || end < 0 || main < 0 || sub < 0 {
			return
		}
		tok := HistoryToken{Start: start, End: end, Next: kv.Revision{Main: main, Sub: sub},
			Descend: flags&1 != 0, NoPut: flags&2 != 0, NoDelete: flags&4 != 0}
		sealed := s.SealHistory(tok, sel)
		if got, ok := s.OpenHistory(sealed, sel); !ok || got != tok {
			t.Fatalf("openHistory(sealHistory(%+v)) = %+v, %v", tok, got, ok)
		}
		if _, ok := s.OpenHistory(sealed, keyrange.Range{Key: []byte("a")}); ok {
			t.Fatalf("a token of [a, b) opened for the key a")
		}
	})
}
