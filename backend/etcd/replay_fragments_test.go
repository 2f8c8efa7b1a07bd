package etcd

import "testing"

// TestPrefixRange: a replay's range under a prefix is the one clientv3's
// namespace package makes: a key alone, a range, and every key from a key
// to the end of the prefix (or of the key space, with none).
func TestPrefixRange(t *testing.T) {
	for _, c := range []struct {
		prefix, key, end string
		wantKey, wantEnd string
	}{
		{"/ns/kv/", "a", "", "/ns/kv/a", ""},
		{"/ns/kv/", "a", "b", "/ns/kv/a", "/ns/kv/b"},
		{"/ns/kv/", "a", "\x00", "/ns/kv/a", "/ns/kv0"},
		{"", "a", "\x00", "a", "\x00"},
		{"", "a", "", "a", ""},
	} {
		k, e := prefixRange(c.prefix, []byte(c.key), []byte(c.end))
		if string(k) != c.wantKey || string(e) != c.wantEnd {
			t.Errorf("prefixRange(%q, %q, %q) = %q, %q, want %q, %q", c.prefix, c.key, c.end, k, e, c.wantKey, c.wantEnd)
		}
	}
}
