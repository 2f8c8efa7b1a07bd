package httpapi

import (
	"unicode/utf8"
)

// jsonTextError refuses what encoding/json decodes without complaint but
// not as sent: a string that is not UTF-8. encoding/json replaces each
// byte that is not UTF-8, and each escaped UTF-16 surrogate without its
// pair ("\ud800"), with U+FFFD, so a put of the key "\xff" would write
// the key "\uFFFD". Keys and values that are not UTF-8 come as their
// _base64 twins.
//
// body has decoded without error, so it is JSON: every backslash starts
// an escape inside a string.
func jsonTextError(body []byte) *apiError {
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
	for i := 0; i < len(body); i++ {
		if body[i] != '\\' {
			continue
		}
		if body[i+1] != 'u' {
			i++ // the escaped byte, which may be a backslash
			continue
		}
		r := hex4(body[i+2 : i+6])
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return notUTF8(i)
		case r >= 0xD800 && r <= 0xDBFF:
			// A high surrogate needs a low one right after it.
			if i+12 > len(body) || body[i+6] != '\\' || body[i+7] != 'u' {
				return notUTF8(i)
			}
			if lo := hex4(body[i+8 : i+12]); lo < 0xDC00 || lo > 0xDFFF {
				return notUTF8(i)
			}
			i += 11
		default:
			i += 5
		}
	}
	return nil
}

func notUTF8(at int) *apiError {
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
