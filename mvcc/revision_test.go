package mvcc

import (
	"bytes"
	"errors"
	"testing"

	"github.com/httpkv/httpkv/kv"
)

// FuzzParseRevBytes feeds parseRevBytes arbitrary bbolt keys: it never
// panics, fails only with ErrCorrupt, and what it accepts encodes back to
// the same bytes.
func FuzzParseRevBytes(f *testing.F) {
	f.Add(revBytes(kv.Revision{Main: 2}, false))
	f.Add(revBytes(kv.Revision{Main: 1 << 40, Sub: 7}, true))
	f.Add(append(revBytes(kv.Revision{Main: 3}, false), 'x')) // unknown mark
	f.Add([]byte("0123456789abcdefg"))                        // no separator
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		rev, tomb, err := parseRevBytes(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("parseRevBytes(%x) = %v, want an ErrCorrupt", b, err)
			}
			return
		}
		if got := revBytes(rev, tomb); !bytes.Equal(got, b) {
			t.Fatalf("revBytes(parseRevBytes(%x) = %v, %v) = %x, want the input back", b, rev, tomb, got)
		}
	})
}

// FuzzRevBytesRoundTrip checks that every revision survives encoding, and
// that for revisions bbolt can hold (non-negative) byte order is revision
// order, which is what reading history with a cursor relies on.
func FuzzRevBytesRoundTrip(f *testing.F) {
	f.Add(int64(2), int64(0), int64(2), int64(1), false)
	f.Add(int64(255), int64(0), int64(256), int64(0), true)
	f.Add(int64(-1), int64(3), int64(0), int64(0), false)
	f.Fuzz(func(t *testing.T, main1, sub1, main2, sub2 int64, tomb bool) {
		a, b := kv.Revision{Main: main1, Sub: sub1}, kv.Revision{Main: main2, Sub: sub2}
		enc := revBytes(a, tomb)
		got, gotTomb, err := parseRevBytes(enc)
		if err != nil || got != a || gotTomb != tomb {
			t.Fatalf("parseRevBytes(revBytes(%v, %v)) = %v, %v, %v, want %v, %v, nil", a, tomb, got, gotTomb, err, a, tomb)
		}
		if min(main1, sub1, main2, sub2) < 0 {
			return
		}
		order := bytes.Compare(revBytes(a, false), revBytes(b, false))
		if want := compareRevisions(a, b); order != want {
			t.Fatalf("bytes.Compare(revBytes(%v), revBytes(%v)) = %d, want %d", a, b, order, want)
		}
	})
}
