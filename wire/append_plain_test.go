package wire

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// TestPlain8 checks the word test against the byte table: every byte
// value in every position of an otherwise plain word, and random words
// of bytes near the edges of the table.
func TestPlain8(t *testing.T) {
	want := func(b []byte) bool {
		for _, c := range b {
			if !plainASCII[c] {
				return false
			}
		}
		return true
	}
	check := func(b []byte) {
		t.Helper()
		if got := plain8(binary.LittleEndian.Uint64(b)); got != want(b) {
			t.Fatalf("plain8(%q) = %v; want %v", b, got, want(b))
		}
	}
	for pos := range 8 {
		for c := range 256 {
			b := []byte("abcdefgh")
			b[pos] = byte(c)
			check(b)
		}
	}
	edges := []byte{0, 0x1f, 0x20, 0x21, '"', 0x23, 0x5b, '\\', 0x5d, 0x7e, 0x7f, 0x80, 0xff, 'a'}
	r := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		var b [8]byte
		for i := range b {
			b[i] = edges[r.IntN(len(edges))]
		}
		check(b[:])
	}
}
