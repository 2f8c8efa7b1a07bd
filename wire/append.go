package wire

import (
	"encoding/base64"
	"encoding/binary"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/httpkv/httpkv/kv"
)

// The JSON written by this package is appended by hand rather than through
// encoding/json: it is on the path of every watch event, and a key or value
// goes out as a string field or as its *_base64 twin depending on its
// bytes, which struct tags cannot say.

// plainASCII says which bytes a JSON string takes as they are: ASCII but
// control characters, '"' and '\\'. One lookup a byte, where the tests it
// replaces took four: the loop of AppendString runs for every byte of
// every key and value a list returns.
var plainASCII = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// plain8 reports whether the eight bytes packed in w are all plainASCII,
// in a few word operations (the "has a zero byte" tests of Hacker's
// Delight): keys and values are mostly plain text, and AppendString
// skips them eight bytes at a time.
func plain8(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	if w&highs != 0 {
		return false // a byte of 0x80 or more
	}
	// With every byte below 0x80, byte - n borrows into its high bit
	// exactly when byte < n, and x ^ c has a zero byte where x has c.
	quote, backslash := w^(ones*'"'), w^(ones*'\\')
	return (w-ones*0x20)&^w&highs == 0 &&
		(quote-ones)&^quote&highs == 0 &&
		(backslash-ones)&^backslash&highs == 0
}

// AppendString appends s as a JSON string. s must be valid UTF-8.
func AppendString(dst []byte, s []byte) []byte {
	dst = append(dst, '"')
	dst = AppendStringBody(dst, s)
	return append(dst, '"')
}

// AppendStringBody appends s as the inside of a JSON string, without
// its quotes: a string split at rune boundaries may be appended a piece
// at a time. s must be valid UTF-8.
func AppendStringBody(dst []byte, s []byte) []byte {
	const hex = "0123456789abcdef"
	start := 0
	for i := 0; i < len(s); {
		i += plainPrefix(s[i:])
		if i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		// U+2028 and U+2029 are valid JSON but end lines in JavaScript.
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(dst, s[start:]...)
}

// plainPrefix returns how many of the first bytes of s are plainASCII,
// taken eight at a time while it can.
func plainPrefix(s []byte) int {
	i := 0
	for i+8 <= len(s) && plain8(binary.LittleEndian.Uint64(s[i:])) {
		i += 8
	}
	for i < len(s) && plainASCII[s[i]] {
		i++
	}
	return i
}

// AppendBytesField appends `"name":"..."` when b is valid UTF-8 and
// `"name_base64":"..."` otherwise, preceded by a comma unless first.
// Plain ASCII, the common case, is valid UTF-8 with nothing to escape:
// one pass over it decides and copies.
func AppendBytesField(dst []byte, name string, b []byte, first bool) []byte {
	if !first {
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, name...)
	plain := plainPrefix(b)
	if plain == len(b) || utf8.Valid(b[plain:]) {
		dst = append(dst, '"', ':', '"')
		dst = append(dst, b[:plain]...)
		dst = AppendStringBody(dst, b[plain:])
		return append(dst, '"')
	}
	dst = append(dst, "_base64\":\""...)
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}

// AppendIntField appends `,"name":n`.
func AppendIntField(dst []byte, name string, n int64) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, name...)
	dst = append(dst, '"', ':')
	return strconv.AppendInt(dst, n, 10)
}

// AppendBoolField appends `,"name":true` or false.
func AppendBoolField(dst []byte, name string, v bool) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, name...)
	dst = append(dst, '"', ':')
	return strconv.AppendBool(dst, v)
}

// AppendKV appends a KeyValue object. withValue leaves the value out for
// keys-only reads and delete events.
func AppendKV(dst []byte, entry *kv.KeyValue, withValue bool) []byte {
	dst = append(dst, '{')
	dst = AppendBytesField(dst, "key", entry.Key, true)
	if withValue {
		dst = AppendBytesField(dst, "value", entry.Value, false)
	}
	// The field names are appended whole, with their punctuation: a
	// list appends four for every key.
	dst = append(dst, `,"create_revision":`...)
	dst = strconv.AppendInt(dst, entry.CreateRevision, 10)
	dst = append(dst, `,"mod_revision":`...)
	dst = strconv.AppendInt(dst, entry.ModRevision, 10)
	dst = append(dst, `,"version":`...)
	dst = strconv.AppendInt(dst, entry.Version, 10)
	dst = append(dst, `,"lease":`...)
	dst = strconv.AppendInt(dst, entry.Lease, 10)
	return append(dst, '}')
}

// AppendKVs appends the array name of kvs. It grows dst once, to about
// what the array takes, rather than by doubling as it fills: a list's
// answer would otherwise be copied twice over on its way out.
func AppendKVs(dst []byte, name string, kvs []kv.KeyValue, withValue bool) []byte {
	dst = slices.Grow(dst, KVsSize(kvs, withValue)+len(name)+8)
	dst = append(dst, ',', '"')
	dst = append(dst, name...)
	dst = append(dst, "\":["...)
	for i := range kvs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendKV(dst, &kvs[i], withValue)
	}
	return append(dst, ']')
}

// kvObjectSize is about what AppendKV writes for a key besides its key
// and value: the field names and four revisions of up to 9 digits.
const kvObjectSize = 100

// KVsSize is about what AppendKVs writes for kvs: exact for keys and
// values of plain text, short of it for those with characters to escape
// (the buffer then grows as usual), and a value that is not UTF-8 takes a
// third more in base64.
func KVsSize(kvs []kv.KeyValue, withValue bool) int {
	n := 0
	for i := range kvs {
		n += len(kvs[i].Key) + kvObjectSize
		if withValue {
			n += len(kvs[i].Value) + len(kvs[i].Value)/3
		}
	}
	return n
}

// AppendHeader starts an object with its header: `{"header":{"revision":R}`.
func AppendHeader(dst []byte, rev int64) []byte {
	dst = append(dst, `{"header":{"revision":`...)
	dst = strconv.AppendInt(dst, rev, 10)
	return append(dst, '}')
}

// TextOrBase64 is b as a key-like field of a declared wire type: text
// when b is valid UTF-8, else its standard base64 twin, the other empty
// (as AppendBytesField writes it).
func TextOrBase64(b []byte) (text, b64 string) {
	if utf8.Valid(b) {
		return string(b), ""
	}
	return "", base64.StdEncoding.EncodeToString(b)
}

// AppendEventsField appends `,"events":[...]`.
func AppendEventsField(p []byte, evs []kv.Event) []byte {
	p = append(p, `,"events":[`...)
	for i := range evs {
		if i > 0 {
			p = append(p, ',')
		}
		p = AppendEvent(p, &evs[i])
	}
	return append(p, ']')
}

// AppendEvent appends ev as a WatchEvent: a delete's key without a value.
func AppendEvent(b []byte, ev *kv.Event) []byte {
	b = append(b, `{"type":"`...)
	b = append(b, ev.Type.String()...)
	b = append(b, `","kv":`...)
	b = AppendKV(b, &ev.KV, ev.Type == 0)
	if ev.PrevKV != nil {
		b = append(b, `,"prev_kv":`...)
		b = AppendKV(b, ev.PrevKV, true)
	}
	return append(b, '}')
}
