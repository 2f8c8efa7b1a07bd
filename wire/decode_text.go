package wire

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// CheckText refuses what encoding/json decodes without complaint but
// not as sent:
//
//   - a string that is not UTF-8. encoding/json replaces each byte that is
//     not UTF-8, and each escaped UTF-16 surrogate without its pair
//     ("\ud800"), with U+FFFD, so a put of the key "\xff" would write the
//     key "\uFFFD". Keys and values that are not UTF-8 come as their
//     _base64 twins.
//   - an object that names a field twice. encoding/json keeps the last,
//     and matches names case-insensitively, so {"key":"a","KEY":"b"}
//     would put b.
//
// body has decoded without error, with unknown fields refused: so it is
// JSON, every backslash starts an escape inside a string, and an object
// has no more names than its type has fields (plus the duplicate), which
// bounds the names compared.
func CheckText(body []byte) error {
	if !utf8.Valid(body) {
		at := 0
		for at < len(body) {
			r, n := utf8.DecodeRune(body[at:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			at += n
		}
		return notUTF8(at)
	}
	// names holds the field names of every object open at i so far, and
	// open, for each object or array open at i, where its names start in
	// names (-1 for an array). Both start on the stack: a request's body
	// is a few levels deep with a few names each, and this runs on every
	// one.
	var namesBuf [32][]byte
	var openBuf [16]int
	names, open := namesBuf[:0], openBuf[:0]
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '{':
			open = append(open, len(names))
		case '[':
			open = append(open, -1)
		case '}', ']':
			if from := open[len(open)-1]; from >= 0 {
				names = names[:from]
			}
			open = open[:len(open)-1]
		case '"':
			end, aerr := endOfString(body, i)
			if aerr != nil {
				return aerr
			}
			if top := len(open) - 1; top >= 0 && open[top] >= 0 && isFieldName(body, end) {
				name := fieldName(body[i : end+1])
				for _, n := range names[open[top]:] {
					if bytes.EqualFold(n, name) {
						return badRequest("the field %.64q is given more than once in one object (at byte %d): give it once", name, i)
					}
				}
				names = append(names, name)
			}
			i = end
		}
	}
	return nil
}

// endOfString returns the index of the quote that ends the string body[at]
// opens, refusing an escaped surrogate without its pair.
func endOfString(body []byte, at int) (int, *Error) {
	for i := at + 1; ; i++ {
		switch body[i] {
		case '"':
			return i, nil
		case '\\':
		default:
			continue
		}
		if body[i+1] != 'u' {
			i++ // the escaped byte, which may be a quote or a backslash
			continue
		}
		r := hex4(body[i+2 : i+6])
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return 0, notUTF8(i)
		case r >= 0xD800 && r <= 0xDBFF:
			// A high surrogate needs a low one right after it.
			if i+12 > len(body) || body[i+6] != '\\' || body[i+7] != 'u' {
				return 0, notUTF8(i)
			}
			if lo := hex4(body[i+8 : i+12]); lo < 0xDC00 || lo > 0xDFFF {
				return 0, notUTF8(i)
			}
			i += 11
		default:
			i += 5
		}
	}
}

// isFieldName says whether the string ending at end is an object's field
// name: a colon follows it.
func isFieldName(body []byte, end int) bool {
	for i := end + 1; i < len(body); i++ {
		switch body[i] {
		case ' ', '\t', '\r', '\n':
		default:
			return body[i] == ':'
		}
	}
	return false
}

// fieldName is the name a quoted JSON string stands for: its bytes
// between the quotes, unless it has an escape.
func fieldName(quoted []byte) []byte {
	if bytes.IndexByte(quoted, '\\') < 0 {
		return quoted[1 : len(quoted)-1]
	}
	var s string
	_ = json.Unmarshal(quoted, &s) // it decoded once already
	return []byte(s)
}

func notUTF8(at int) *Error {
	return badRequest("a JSON string at byte %d is not UTF-8 (a byte that is not, or an escaped UTF-16 surrogate without its pair): send keys and values that are not UTF-8 in their _base64 fields", at)
}

// hex4 is the value of four hex digits, which JSON's \u escape has.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		r <<= 4
		switch {
		case '0' <= c && c <= '9':
			r |= rune(c - '0')
		case 'a' <= c && c <= 'f':
			r |= rune(c - 'a' + 10)
		case 'A' <= c && c <= 'F':
			r |= rune(c - 'A' + 10)
		}
	}
	return r
}
