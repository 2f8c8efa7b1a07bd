package client

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"
)

// Header is the header of every answer that reflects the store.
type Header struct {
	// Revision is the store's revision when the request was served.
	Revision int64 `json:"revision"`
}

// KeyValue is a key with its value and metadata. In JSON a key or value
// is a string when its bytes are valid UTF-8, and its *_base64 twin
// otherwise; KeyValue reads and writes both forms.
type KeyValue struct {
	Key   []byte
	Value []byte // nil for a keys-only read and in a delete event
	// CreateRevision is the revision that created the key (since it last did not exist).
	CreateRevision int64
	// ModRevision is the revision of the key's last change: its ETag.
	ModRevision int64
	// Version counts the key's changes since it was created.
	Version int64
	// Lease is the ID of the key's lease, 0 for none.
	Lease int64
}

type keyValueWire struct {
	Key            *string `json:"key,omitempty"`
	KeyBase64      []byte  `json:"key_base64,omitempty"`
	Value          *string `json:"value,omitempty"`
	ValueBase64    []byte  `json:"value_base64,omitempty"`
	CreateRevision int64   `json:"create_revision"`
	ModRevision    int64   `json:"mod_revision"`
	Version        int64   `json:"version"`
	Lease          int64   `json:"lease"`
}

// UnmarshalJSON reads a KeyValue of the API.
func (kv *KeyValue) UnmarshalJSON(b []byte) error {
	var w keyValueWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*kv = KeyValue{
		Key:            twin(w.Key, w.KeyBase64),
		Value:          twin(w.Value, w.ValueBase64),
		CreateRevision: w.CreateRevision,
		ModRevision:    w.ModRevision,
		Version:        w.Version,
		Lease:          w.Lease,
	}
	return nil
}

// MarshalJSON writes a KeyValue as the API does.
func (kv KeyValue) MarshalJSON() ([]byte, error) {
	w := keyValueWire{CreateRevision: kv.CreateRevision, ModRevision: kv.ModRevision, Version: kv.Version, Lease: kv.Lease}
	w.Key, w.KeyBase64 = splitTwin(kv.Key)
	if kv.Value != nil {
		w.Value, w.ValueBase64 = splitTwin(kv.Value)
	}
	return json.Marshal(w)
}

// twin returns the bytes of a field given as text or as its base64 twin
// (which encoding/json has decoded already).
func twin(text *string, b64 []byte) []byte {
	if text != nil {
		return []byte(*text)
	}
	return b64
}

// splitTwin is b as a field's text, or as its base64 twin when b is not
// valid UTF-8.
func splitTwin(b []byte) (*string, []byte) {
	if utf8.Valid(b) {
		s := string(b)
		return &s, nil
	}
	return nil, b
}

// Event is one change of a key, in a watch or a history.
type Event struct {
	// Type is "put" or "delete".
	Type string `json:"type"`
	// KV is the key after the change; for a delete, the key and the
	// delete's revision as ModRevision.
	KV KeyValue `json:"kv"`
	// PrevKV is the key before the change, when asked for and it existed.
	PrevKV *KeyValue `json:"prev_kv,omitempty"`
}

// Selector names the keys a call reads, deletes, watches or exports: one
// key, the keys with a prefix, the keys from a key on, the range
// [Key, End), or every key.
type Selector struct {
	Key     []byte
	End     []byte // the end of the range [Key, End), exclusive
	Prefix  bool   // every key that starts with Key
	FromKey bool   // every key >= Key
}

// Key selects one key.
func Key(key string) Selector { return Selector{Key: []byte(key)} }

// Prefix selects every key that starts with prefix; Prefix("") is every key.
func Prefix(prefix string) Selector { return Selector{Key: []byte(prefix), Prefix: true} }

// FromKey selects every key >= key.
func FromKey(key string) Selector { return Selector{Key: []byte(key), FromKey: true} }

// Range selects the keys in [key, end).
func Range(key, end string) Selector { return Selector{Key: []byte(key), End: []byte(end)} }

// All selects every key.
func All() Selector { return Selector{Prefix: true} }

// IsKey reports whether s selects one key.
func (s Selector) IsKey() bool { return !s.Prefix && !s.FromKey && s.End == nil }

// all reports whether s is every key.
func (s Selector) all() bool { return len(s.Key) == 0 && (s.Prefix || s.FromKey) }

// String describes s for messages.
func (s Selector) String() string {
	switch {
	case s.all():
		return "every key"
	case s.Prefix:
		return fmt.Sprintf("the keys with the prefix %q", s.Key)
	case s.FromKey:
		return fmt.Sprintf("the keys from %q on", s.Key)
	case s.End != nil:
		return fmt.Sprintf("the keys in [%q, %q)", s.Key, s.End)
	}
	return fmt.Sprintf("the key %q", s.Key)
}

// addQuery adds s to a query as the range selectors of the API.
func (s Selector) addQuery(q url.Values) {
	if s.all() {
		return // no selector is every key
	}
	addBytes(q, "key", s.Key)
	switch {
	case s.Prefix:
		q.Set("prefix", "true")
	case s.FromKey:
		q.Set("from_key", "true")
	case s.End != nil:
		addBytes(q, "range_end", s.End)
	}
}

// selectorWire is a Selector in a JSON body.
type selectorWire struct {
	Key            *string `json:"key,omitempty"`
	KeyBase64      []byte  `json:"key_base64,omitempty"`
	RangeEnd       *string `json:"range_end,omitempty"`
	RangeEndBase64 []byte  `json:"range_end_base64,omitempty"`
	Prefix         bool    `json:"prefix,omitempty"`
	FromKey        bool    `json:"from_key,omitempty"`
}

func (s Selector) wire() selectorWire {
	if s.all() {
		return selectorWire{}
	}
	w := selectorWire{Prefix: s.Prefix, FromKey: s.FromKey}
	w.Key, w.KeyBase64 = splitTwin(s.Key)
	if s.End != nil && !s.Prefix && !s.FromKey {
		w.RangeEnd, w.RangeEndBase64 = splitTwin(s.End)
	}
	return w
}

// addBytes sets name, or name_base64 when b is not valid UTF-8.
func addBytes(q url.Values, name string, b []byte) {
	if utf8.Valid(b) {
		q.Set(name, string(b))
		return
	}
	q.Set(name+"_base64", base64.StdEncoding.EncodeToString(b))
}

// escapeKey escapes a key for the path /v1/kv/{key}, whose slashes are
// the key's: every byte but unreserved ones and '/' is percent-encoded,
// and so are the dots of a segment of dots, which a proxy would
// otherwise take for "." and "..".
func escapeKey(key []byte) string {
	var b strings.Builder
	const hex = "0123456789ABCDEF"
	segStart := 0
	for i, c := range key {
		if c == '/' {
			segStart = i + 1
		}
		switch {
		case c == '.' && dotsOnly(key[segStart:]):
			b.WriteString("%2E")
		case c == '/' || c == '-' || c == '_' || c == '.' || c == '~' ||
			'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9':
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

// dotsOnly reports whether the path segment at the start of s is dots.
func dotsOnly(s []byte) bool {
	for _, c := range s {
		if c == '/' {
			return true
		}
		if c != '.' {
			return false
		}
	}
	return true
}

// escapeName escapes a lock's or an election's name for its one path
// segment: a slash in it becomes %2F.
func escapeName(name string) string {
	return strings.ReplaceAll(escapeKey([]byte(name)), "/", "%2F")
}

// RangeEnd is the end of the range s selects, as the API's range_end
// would give it: nil for one key, the first key past the prefix for a
// prefix (a single zero byte when there is none, as for every key), and
// a single zero byte for every key >= Key.
func (s Selector) RangeEnd() []byte {
	switch {
	case s.Prefix:
		end := append([]byte(nil), s.Key...)
		for i := len(end) - 1; i >= 0; i-- {
			if end[i] < 0xff {
				end[i]++
				return end[:i+1]
			}
		}
		return []byte{0}
	case s.FromKey:
		return []byte{0}
	}
	return s.End
}
