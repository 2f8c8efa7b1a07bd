package wire

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"unicode/utf8"

	"github.com/httpkv/httpkv/kv"
)

func TestAppendString(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"empty", "", `""`},
		{"plain", "abc/def", `"abc/def"`},
		{"quote and backslash", `a"b\c`, `"a\"b\\c"`},
		{"short escapes", "a\nb\rc\td", `"a\nb\rc\td"`},
		{"other controls", "\x00\x01\x08\x0c\x1f", `"\u0000\u0001\u0008\u000c\u001f"`},
		{"DEL passes", "\x7f", "\"\x7f\""},
		{"html passes", "<a&b>", `"<a&b>"`},
		{"multibyte passes", "héllo, 世界 😀", `"héllo, 世界 😀"`},
		{"line separator", "a\u2028b", `"a\u2028b"`},
		{"paragraph separator", "a\u2029b", `"a\u2029b"`},
		{"neighbours of the separators pass", "\u2027\u202a", "\"\u2027\u202a\""},
		{"escape at the end", "ab\n", `"ab\n"`},
		{"escape at the start", "\"ab", `"\"ab"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(AppendString([]byte("x"), []byte(tt.in)))
			if got != "x"+tt.want {
				t.Errorf("appendString(%q) = %s, want %s", tt.in, got[1:], tt.want)
			}
			var back string
			if err := json.Unmarshal([]byte(got[1:]), &back); err != nil || back != tt.in {
				t.Errorf("json.Unmarshal(appendString(%q)) = %q, %v; want the input back", tt.in, back, err)
			}
		})
	}
}

func TestAppendBytesField(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"utf8", []byte("a\"b"), `{"key":"a\"b"}`},
		{"empty", []byte{}, `{"key":""}`},
		{"nil", nil, `{"key":""}`},
		{"invalid byte", []byte{'a', 0xff}, `{"key_base64":"Yf8="}`},
		{"truncated rune", []byte("\xe2\x80"), `{"key_base64":"4oA="}`},
		{"encoded surrogate", []byte("\xed\xa0\x80"), `{"key_base64":"7aCA"}`},
		{"overlong slash", []byte("\xc0\xaf"), `{"key_base64":"wK8="}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(append(AppendBytesField([]byte("{"), "key", tt.in, true), '}'))
			if got != tt.want {
				t.Errorf("appendBytesField(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

// randomBytes returns a short byte string built from pieces that stress
// the encoder: controls, quotes, the JavaScript line separators, valid
// multi-byte runes and invalid sequences.
func randomBytes(rng *rand.Rand) []byte {
	pieces := [][]byte{
		{0}, {'\n'}, {'\r'}, {'\t'}, {0x1f}, {0x7f}, {'"'}, {'\\'}, {'/'}, {'<'},
		[]byte("a"), []byte("key"), []byte("é"), []byte("世"), []byte("😀"),
		[]byte("\u2028"), []byte("\u2029"), []byte("\ufeff"), []byte("\ufffd"),
		{0xff}, {0x80}, {0xc0}, {0xe2, 0x80}, {0xed, 0xa0, 0x80}, {0xf4, 0x90, 0x80, 0x80},
	}
	var b []byte
	for range rng.IntN(12) {
		if rng.IntN(4) == 0 {
			b = append(b, byte(rng.IntN(256)))
			continue
		}
		b = append(b, pieces[rng.IntN(len(pieces))]...)
	}
	return b
}

// checkBytesField checks that AppendBytesField(b) decodes, with
// encoding/json, to b in the right form: the string field for valid
// UTF-8, else the base64 twin; never both; and that the output holds no
// raw control character or JavaScript line separator.
func checkBytesField(t testing.TB, b []byte) {
	t.Helper()
	out := append(AppendBytesField([]byte("{"), "value", b, true), '}')
	if !json.Valid(out) {
		t.Fatalf("appendBytesField(%q) = %s: not valid JSON", b, out)
	}
	var got map[string]string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("json.Unmarshal(appendBytesField(%q) = %s): %v", b, out, err)
	}
	if len(got) != 1 {
		t.Fatalf("appendBytesField(%q) = %s: want exactly one field", b, out)
	}
	if utf8.Valid(b) {
		s, ok := got["value"]
		if !ok || s != string(b) {
			t.Fatalf("appendBytesField(%q) = %s: decodes to %q, want the value field %q", b, out, got, b)
		}
	} else {
		s, ok := got["value_base64"]
		dec, err := base64.StdEncoding.DecodeString(s)
		if !ok || err != nil || !bytes.Equal(dec, b) {
			t.Fatalf("appendBytesField(%q) = %s: decodes to %q, want value_base64 of the bytes", b, out, got)
		}
	}
	for _, bad := range []string{"\u2028", "\u2029"} {
		if bytes.Contains(out, []byte(bad)) {
			t.Fatalf("appendBytesField(%q) = %q: holds a raw %U", b, out, []rune(bad)[0])
		}
	}
	for _, c := range out {
		if c < 0x20 {
			t.Fatalf("appendBytesField(%q) = %q: holds the raw control byte %#x", b, out, c)
		}
	}
}

func TestAppendBytesFieldRandom(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	for range 20000 {
		checkBytesField(t, randomBytes(rng))
	}
}

// TestAppendKVDecodes checks a whole KeyValue against encoding/json.
func TestAppendKVDecodes(t *testing.T) {
	kval := kv.KeyValue{Key: []byte("k\u2028"), Value: []byte{0xff, 0}, CreateRevision: 2, ModRevision: 3, Version: 2, Lease: 7}
	out := AppendKV(nil, &kval, true)
	var got KeyValue
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("json.Unmarshal(AppendKV) = %v; body %s", err, out)
	}
	want := KeyValue{Key: "k\u2028", ValueBase64: base64.StdEncoding.EncodeToString([]byte{0xff, 0}), CreateRevision: 2, ModRevision: 3, Version: 2, Lease: 7}
	if got != want {
		t.Errorf("AppendKV = %s, decodes to %+v, want %+v", out, got, want)
	}
	keysOnly := AppendKV(nil, &kval, false)
	if bytes.Contains(keysOnly, []byte(`"value`)) {
		t.Errorf("AppendKV(withValue=false) = %s, want no value field", keysOnly)
	}
}

func FuzzAppendBytesField(f *testing.F) {
	for _, s := range []string{"", "a", "\x00", "\"\\", "\u2028\u2029", "\xff", "\xed\xa0\x80", "é\xe2\x80"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkBytesField(t, b)
	})
}
