package wire

import (
	"encoding/base64"
	"unicode/utf8"

	"github.com/httpkv/httpkv/kv"
)

// The exact sizes of what the appenders of append.go write, without
// writing it: a stream of many watchers counts what it will hold against
// the bound for all streams before it encodes it (stream/multi/flow.go),
// and JSON escapes a control byte in six, so the raw size of a value says
// little of its encoding.

// stringBodySize is len(AppendStringBody(nil, s)). s must be valid UTF-8.
func stringBodySize(s []byte) int {
	n := len(s)
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case plainASCII[c]:
			i++
		case c < utf8.RuneSelf:
			if c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' {
				n++ // a backslash before it
			} else {
				n += 5 // \u00XX for one byte
			}
			i++
		default:
			r, size := utf8.DecodeRune(s[i:])
			if r == '\u2028' || r == '\u2029' {
				n += 6 - size
			}
			i += size
		}
	}
	return n
}

// bytesFieldSize is what AppendBytesField appends.
func bytesFieldSize(name string, b []byte, first bool) int {
	n := 0
	if !first {
		n++
	}
	if utf8.Valid(b) {
		return n + len(name) + len(`"":""`) + stringBodySize(b)
	}
	return n + len(name) + len(`"_base64":""`) + base64.StdEncoding.EncodedLen(len(b))
}

// intFieldSize is what AppendIntField appends.
func intFieldSize(name string, v int64) int {
	return len(name) + len(`,"":`) + intSize(v)
}

// intSize is len(strconv.AppendInt(nil, v, 10)).
func intSize(v int64) int {
	n := 1
	if v < 0 {
		n++
		if v == -1<<63 {
			return 20
		}
		v = -v
	}
	for ; v >= 10; v /= 10 {
		n++
	}
	return n
}

// kvSize is what AppendKV appends.
func kvSize(entry *kv.KeyValue, withValue bool) int {
	n := len("{}") + bytesFieldSize("key", entry.Key, true)
	if withValue {
		n += bytesFieldSize("value", entry.Value, false)
	}
	return n + intFieldSize("create_revision", entry.CreateRevision) + intFieldSize("mod_revision", entry.ModRevision) +
		intFieldSize("version", entry.Version) + intFieldSize("lease", entry.Lease)
}

// EventsFieldSize is what AppendEventsField appends for evs.
func EventsFieldSize(evs []kv.Event) int {
	n := len(`,"events":[]`)
	for i := range evs {
		ev := &evs[i]
		if i > 0 {
			n++
		}
		n += len(`{"type":"","kv":}`) + len(ev.Type.String()) + kvSize(&ev.KV, ev.Type == 0)
		if ev.PrevKV != nil {
			n += len(`,"prev_kv":`) + kvSize(ev.PrevKV, true)
		}
	}
	return n
}
