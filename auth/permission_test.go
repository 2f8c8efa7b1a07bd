package auth

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// sel is a (key, end) selection as Permission and requests read it: end ""
// for the single key, "\x00" for every key from key on, [key, end)
// otherwise.
type sel struct{ key, end string }

func (s sel) String() string {
	switch s.end {
	case "":
		return fmt.Sprintf("%q", s.key)
	case "\x00":
		return fmt.Sprintf("[%q, +inf)", s.key)
	}
	return fmt.Sprintf("[%q, %q)", s.key, s.end)
}

func (s sel) span() span { return toSpan(bytesOrNil(s.key), bytesOrNil(s.end)) }

func bytesOrNil(s string) []byte {
	if s == "" {
		return nil
	}
	return []byte(s)
}

func spansOf(sels []sel) []span {
	out := make([]span, len(sels))
	for i, s := range sels {
		out[i] = s.span()
	}
	return out
}

func formatCoverage(c coverage) string {
	var b bytes.Buffer
	for i, s := range c {
		if i > 0 {
			b.WriteString(" ")
		}
		if s.end == nil {
			fmt.Fprintf(&b, "[%q, +inf)", s.start)
		} else {
			fmt.Fprintf(&b, "[%q, %q)", s.start, s.end)
		}
	}
	return b.String()
}

func TestToSpan(t *testing.T) {
	tests := []struct {
		name     string
		in       sel
		start    string
		end      string
		infinite bool
	}{
		{"single key", sel{"a", ""}, "a", "a\x00", false},
		{"range", sel{"a", "c"}, "a", "c", false},
		{"from key", sel{"a", "\x00"}, "a", "", true},
		{"every key", sel{"\x00", "\x00"}, "\x00", "", true},
		{"range ending in a zero byte is a range", sel{"a", "b\x00"}, "a", "b\x00", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.in.span()
			if string(got.start) != tt.start || (got.end == nil) != tt.infinite || (!tt.infinite && string(got.end) != tt.end) {
				t.Errorf("toSpan(%v) = [%q, %q) (nil end %v), want [%q, %q) (nil end %v)",
					tt.in, got.start, got.end, got.end == nil, tt.start, tt.end, tt.infinite)
			}
		})
	}
}

func TestNewCoverage(t *testing.T) {
	tests := []struct {
		name  string
		perms []sel
		want  string // formatCoverage of the merged spans
	}{
		{"none", nil, ""},
		{"single key", []sel{{"a", ""}}, `["a", "a\x00")`},
		{"disjoint stay apart", []sel{{"c", "d"}, {"a", "b"}}, `["a", "b") ["c", "d")`},
		{"touching merge", []sel{{"b", "c"}, {"a", "b"}}, `["a", "c")`},
		{"overlapping merge", []sel{{"a", "c"}, {"b", "d"}}, `["a", "d")`},
		{"contained vanish", []sel{{"a", "z"}, {"b", "c"}, {"x", ""}}, `["a", "z")`},
		{"key and its successor touch", []sel{{"a", ""}, {"a\x00", "b"}}, `["a", "b")`},
		{"gap of one key stays", []sel{{"a", "b"}, {"b\x00", "c"}}, `["a", "b") ["b\x00", "c")`},
		{"from key swallows what follows", []sel{{"b", "\x00"}, {"c", "d"}, {"a", "b"}}, `["a", +inf)`},
		{"from key extends an overlapping range", []sel{{"a", "c"}, {"b", "\x00"}}, `["a", +inf)`},
		{"empty range ignored", []sel{{"c", "a"}, {"b", "b"}}, ""},
		{"same range twice", []sel{{"a", "b"}, {"a", "b"}}, `["a", "b")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := formatCoverage(newCoverage(spansOf(tt.perms)))
			if got != tt.want {
				t.Errorf("newCoverage(%v) = %s, want %s", tt.perms, got, tt.want)
			}
		})
	}
}

func TestCovers(t *testing.T) {
	tests := []struct {
		name  string
		perms []sel
		want  sel
		ok    bool
	}{
		{"no permission", nil, sel{"a", ""}, false},
		{"the key itself", []sel{{"a", ""}}, sel{"a", ""}, true},
		{"another key", []sel{{"a", ""}}, sel{"b", ""}, false},
		{"a longer key is not the key", []sel{{"a", ""}}, sel{"a\x00", ""}, false},
		{"key in range", []sel{{"a", "c"}}, sel{"b", ""}, true},
		{"range end is excluded", []sel{{"a", "c"}}, sel{"c", ""}, false},
		{"key just below range end", []sel{{"a", "c"}}, sel{"bzzz", ""}, true},
		{"subrange", []sel{{"a", "d"}}, sel{"b", "c"}, true},
		{"equal range", []sel{{"a", "d"}}, sel{"a", "d"}, true},
		{"range past the end", []sel{{"a", "d"}}, sel{"b", "e"}, false},
		{"range before the start", []sel{{"b", "d"}}, sel{"a", "c"}, false},
		{"range overlapping, not covered", []sel{{"b", "c"}}, sel{"a", "d"}, false},
		{"range across touching permissions", []sel{{"a", "b"}, {"b", "c"}}, sel{"a", "c"}, true},
		{"range across a gap", []sel{{"a", "b"}, {"b\x00", "c"}}, sel{"a", "c"}, false},
		{"range inside the second of two", []sel{{"a", "b"}, {"c", "e"}}, sel{"c", "d"}, true},
		{"range in the gap", []sel{{"a", "b"}, {"c", "e"}}, sel{"b", "c"}, false},
		{"single key permission does not cover from-key", []sel{{"a", ""}}, sel{"a", "\x00"}, false},
		{"range permission does not cover from-key", []sel{{"a", "z"}}, sel{"a", "\x00"}, false},
		{"prefix permission does not cover from-key", []sel{{"a", "b"}}, sel{"a", "\x00"}, false},
		{"from-key covers from-key above", []sel{{"a", "\x00"}}, sel{"b", "\x00"}, true},
		{"from-key covers itself", []sel{{"a", "\x00"}}, sel{"a", "\x00"}, true},
		{"from-key does not cover from below", []sel{{"b", "\x00"}}, sel{"a", "\x00"}, false},
		{"from-key covers ranges above", []sel{{"b", "\x00"}}, sel{"c", "\xff\xff"}, true},
		{"merged range and from-key cover from-key", []sel{{"a", "b"}, {"b", "\x00"}}, sel{"a", "\x00"}, true},
		{"every key needs every key", []sel{{"\x01", "\x00"}}, sel{"\x00", "\x00"}, false},
		{"every key", []sel{{"\x00", "\x00"}}, sel{"\x00", "\x00"}, true},
		{"empty request range touches nothing", nil, sel{"b", "a"}, true},
		{"equal bounds touch nothing", nil, sel{"b", "b"}, true},
		{"adjacent single keys cover their range", []sel{{"a", ""}, {"a\x00", ""}}, sel{"a", "a\x00\x00"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCoverage(spansOf(tt.perms))
			if got := c.covers(tt.want.span()); got != tt.ok {
				t.Errorf("coverage %v (%s).covers(%v) = %v, want %v", tt.perms, formatCoverage(c), tt.want, got, tt.ok)
			}
			if got := c.coversSel(bytesOrNil(tt.want.key), bytesOrNil(tt.want.end)); got != tt.ok {
				t.Errorf("coverage %v (%s).coversSel(%v) = %v, want %v", tt.perms, formatCoverage(c), tt.want, got, tt.ok)
			}
		})
	}
}

// TestCoversBruteForce compares coverage with a direct check over every
// key of a small universe. Every boundary of a merged span is a key or a
// key followed by one zero byte, so with keys of at most 2 bytes over an
// alphabet holding 0, every gap in the coverage starts at a key of at
// most 3 bytes of the alphabet: checking those keys decides coverage
// exactly.
func TestCoversBruteForce(t *testing.T) {
	alphabet := []byte{0x00, 0x01, 0xff}
	var universe [][]byte
	var extend func(prefix []byte, n int)
	extend = func(prefix []byte, n int) {
		if len(prefix) > 0 {
			universe = append(universe, bytes.Clone(prefix))
		}
		if n == 0 {
			return
		}
		for _, c := range alphabet {
			extend(append(prefix, c), n-1)
		}
	}
	extend(nil, 3)

	rng := rand.New(rand.NewPCG(1, 2))
	randKey := func() string {
		b := make([]byte, 1+rng.IntN(2))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	randSel := func() sel {
		switch rng.IntN(4) {
		case 0:
			return sel{randKey(), ""}
		case 1:
			return sel{randKey(), "\x00"}
		}
		return sel{randKey(), randKey()}
	}
	in := func(k []byte, s sel) bool {
		switch {
		case s.end == "":
			return string(k) == s.key
		case s.end == "\x00":
			return string(k) >= s.key
		}
		return string(k) >= s.key && string(k) < s.end
	}

	for iter := 0; iter < 3000; iter++ {
		perms := make([]sel, rng.IntN(5))
		for i := range perms {
			perms[i] = randSel()
		}
		c := newCoverage(spansOf(perms))
		for i := 1; i < len(c); i++ {
			if !endBefore(c[i-1].end, c[i].start) {
				t.Fatalf("newCoverage(%v) = %s: spans %d and %d touch or overlap", perms, formatCoverage(c), i-1, i)
			}
		}
		for q := 0; q < 10; q++ {
			want := randSel()
			brute := true
			for _, k := range universe {
				if !in(k, want) {
					continue
				}
				held := false
				for _, p := range perms {
					if in(k, p) {
						held = true
						break
					}
				}
				if !held {
					brute = false
					break
				}
			}
			if got := c.covers(want.span()); got != brute {
				t.Fatalf("coverage %v (%s).covers(%v) = %v, want %v (brute force)", perms, formatCoverage(c), want, got, brute)
			}
			if got := c.coversSel(bytesOrNil(want.key), bytesOrNil(want.end)); got != brute {
				t.Fatalf("coverage %v (%s).coversSel(%v) = %v, want %v (brute force)", perms, formatCoverage(c), want, got, brute)
			}
		}
	}
}
