package keyrange

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

func TestConstructors(t *testing.T) {
	cases := []struct {
		name string
		got  Range
		want Range
	}{
		{"single", Single([]byte("a")), Range{Key: []byte("a")}},
		{"from key", FromKey([]byte("a")), Range{Key: []byte("a"), End: []byte{0}}},
		{"between", Between([]byte("a"), []byte("c")), Range{Key: []byte("a"), End: []byte("c")}},
		{"all", All(), Range{Key: []byte{0}, End: []byte{0}}},
		{"prefix", Prefix([]byte("a/")), Range{Key: []byte("a/"), End: []byte("a0")}},
		{"prefix of 0xff bytes", Prefix([]byte{'a', 0xff}), Range{Key: []byte{'a', 0xff}, End: []byte("b")}},
		{"prefix of only 0xff", Prefix([]byte{0xff, 0xff}), Range{Key: []byte{0xff, 0xff}, End: []byte{0}}},
		{"empty prefix", Prefix(nil), All()},
	}
	for _, tc := range cases {
		if !bytes.Equal(tc.got.Key, tc.want.Key) || !bytes.Equal(tc.got.End, tc.want.End) {
			t.Errorf("%s = %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}

func TestPrefixEndDoesNotAlias(t *testing.T) {
	p := []byte("ab")
	end := PrefixEnd(p)
	end[0] = 'z'
	if string(p) != "ab" {
		t.Fatalf("PrefixEnd changed its argument to %q", p)
	}
}

func TestNilEndIsOneKey(t *testing.T) {
	for _, r := range []Range{{Key: []byte("k")}, {Key: []byte("k"), End: []byte{}}} {
		if !r.IsSingle() || r.IsFromKey() || r.IsEmpty() {
			t.Errorf("%q: IsSingle %v, IsFromKey %v, IsEmpty %v; want a single key", r, r.IsSingle(), r.IsFromKey(), r.IsEmpty())
		}
		if !r.Contains([]byte("k")) || r.Contains([]byte("k\x00")) || r.Contains([]byte("l")) {
			t.Errorf("%q contains more or less than the key k", r)
		}
	}
}

func TestContains(t *testing.T) {
	cases := []struct {
		r    Range
		key  string
		want bool
	}{
		{Single([]byte("a")), "a", true},
		{Single([]byte("a")), "ab", false},
		{Between([]byte("a"), []byte("c")), "a", true},
		{Between([]byte("a"), []byte("c")), "bzz", true},
		{Between([]byte("a"), []byte("c")), "c", false},
		{FromKey([]byte("b")), "a", false},
		{FromKey([]byte("b")), "\xff\xff", true},
		{All(), "\x00", true},
		{All(), "anything", true},
		{Between([]byte("c"), []byte("a")), "b", false},
	}
	for _, tc := range cases {
		if got := tc.r.Contains([]byte(tc.key)); got != tc.want {
			t.Errorf("%q.Contains(%q) = %v, want %v", tc.r, tc.key, got, tc.want)
		}
	}
}

// keys is every key of up to three bytes over a small alphabet, in order:
// enough to tell any two of the ranges below apart.
func keys() [][]byte {
	alphabet := []byte{0, 'a', 'b', 'c', 0xff}
	var out [][]byte
	var gen func(prefix []byte, n int)
	gen = func(prefix []byte, n int) {
		if len(prefix) > 0 {
			out = append(out, bytes.Clone(prefix))
		}
		if n == 0 {
			return
		}
		for _, c := range alphabet {
			gen(append(prefix, c), n-1)
		}
	}
	gen(nil, 3)
	return out
}

func randomRange(rng *rand.Rand) Range {
	alphabet := []byte{0, 'a', 'b', 'c', 0xff}
	word := func() []byte {
		b := make([]byte, 1+rng.IntN(2))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return b
	}
	switch rng.IntN(5) {
	case 0:
		return Single(word())
	case 1:
		return FromKey(word())
	case 2:
		return Prefix(word())
	case 3:
		return All()
	}
	return Between(word(), word())
}

// TestAgainstEnumeration checks Contains, Covers, Overlaps, IsEmpty and
// Limit against the sets of keys the ranges hold.
func TestAgainstEnumeration(t *testing.T) {
	all := keys()
	rng := rand.New(rand.NewPCG(1, 2))
	set := func(r Range) []bool {
		in := make([]bool, len(all))
		for i, k := range all {
			in[i] = r.Contains(k)
		}
		return in
	}
	for range 3000 {
		a, b := randomRange(rng), randomRange(rng)
		sa, sb := set(a), set(b)
		covers, overlaps, emptyB := true, false, true
		for i := range all {
			if sb[i] && !sa[i] {
				covers = false
			}
			if sa[i] && sb[i] {
				overlaps = true
			}
			if sb[i] {
				emptyB = false
			}
			// Limit agrees with Contains.
			inInterval := bytes.Compare(all[i], b.Key) >= 0 && AboveKey(b.Limit(), all[i])
			if inInterval != sb[i] {
				t.Fatalf("%q: key %q in [Key, Limit()) = %v, Contains = %v", b, all[i], inInterval, sb[i])
			}
		}
		desc := fmt.Sprintf("a=%q b=%q", a, b)
		if got := a.Covers(b); got != covers {
			t.Fatalf("%s: a.Covers(b) = %v, want %v", desc, got, covers)
		}
		if got := a.Overlaps(b); got != overlaps {
			t.Fatalf("%s: a.Overlaps(b) = %v, want %v", desc, got, overlaps)
		}
		if got := b.Overlaps(a); got != overlaps {
			t.Fatalf("%s: b.Overlaps(a) = %v, want %v", desc, got, overlaps)
		}
		if got := b.IsEmpty(); got != emptyB {
			t.Fatalf("%q.IsEmpty() = %v, want %v", b, got, emptyB)
		}
	}
}

func TestCompareLimits(t *testing.T) {
	cases := []struct {
		a, b []byte
		want int
	}{
		{nil, nil, 0},
		{nil, []byte("z"), 1},
		{[]byte("z"), nil, -1},
		{[]byte("a"), []byte("b"), -1},
		{[]byte("b"), []byte("b"), 0},
	}
	for _, tc := range cases {
		if got := CompareLimits(tc.a, tc.b); got != tc.want {
			t.Errorf("CompareLimits(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
