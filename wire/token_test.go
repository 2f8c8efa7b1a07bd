package wire

import (
	"bytes"
	"encoding/base64"
	"net/url"
	"testing"

	"github.com/httpkv/httpkv/keyrange"
	"github.com/httpkv/httpkv/kv"
)

// TestTokenCodec seals and opens tokens: a token opens, for its kind and
// under its key only, to the payload it was sealed with, and any change
// to it, its kind, or the key refuses it.
func TestTokenCodec(t *testing.T) {
	c := NewTokens([]byte("a key shared by gateways"))
	payloads := [][]byte{{}, []byte("p"), bytes.Repeat([]byte{0xff, 0}, 500)}
	for _, p := range payloads {
		tok := c.Seal(TokenListPage, p)
		got, err := c.Open(TokenListPage, tok)
		if err != nil || !bytes.Equal(got, p) {
			t.Errorf("open(seal(%q)) = %q, %v; want the payload back", p, got, err)
		}
		if url.QueryEscape(tok) != tok {
			t.Errorf("seal(%q) = %q, which needs escaping in a query", p, tok)
		}
		if _, err := c.Open(TokenListPage+1, tok); err == nil {
			t.Errorf("open(another kind, seal(%q)) = nil error, want refused", p)
		}
		if _, err := NewTokens([]byte("another key")).Open(TokenListPage, tok); err == nil {
			t.Errorf("open under another key of seal(%q) = nil error, want refused", p)
		}
		if _, err := NewTokens([]byte("a key shared by gateways")).Open(TokenListPage, tok); err != nil {
			t.Errorf("open under the same key in another codec of seal(%q) = %v, want it opened", p, err)
		}
		raw, _ := base64.RawURLEncoding.DecodeString(tok)
		for i := range raw {
			bad := bytes.Clone(raw)
			bad[i] ^= 0x01
			if got, err := c.Open(TokenListPage, base64.RawURLEncoding.EncodeToString(bad)); err == nil {
				t.Fatalf("open(seal(%q) with byte %d flipped) = %q, want refused", p, i, got)
			}
		}
		for _, cut := range []int{1, 2, len(raw) - 1} {
			if _, err := c.Open(TokenListPage, base64.RawURLEncoding.EncodeToString(raw[:cut])); err == nil {
				t.Errorf("open(seal(%q) cut to %d bytes) = nil error, want refused", p, cut)
			}
		}
	}
	for name, s := range map[string]string{
		"empty": "", "not base64": "!!!", "padded": c.Seal(TokenListPage, nil) + "=", "std alphabet": "+/+/",
		// The unkeyed format of earlier versions: version 1, revision 5,
		// an FNV binding, start key "k".
		"format 1": "AQUAAAAAAAAAB2s",
	} {
		if got, err := c.Open(TokenListPage, s); err == nil {
			t.Errorf("open(%s %q) = %q, want refused", name, s, got)
		}
	}
	if a, b := NewTokens(nil), NewTokens(nil); bytes.Equal(a.key, b.key) || len(a.key) != TokenKeyBytes {
		t.Errorf("two codecs without a key got keys %x and %x, want two random %d-byte keys", a.key, b.key, TokenKeyBytes)
	}
}

// TestListPagePayload round-trips the payload of a list token and refuses
// malformed ones.
func TestListPagePayload(t *testing.T) {
	for _, p := range []ListPage{
		{Rev: 1, Start: []byte{}},
		{Rev: 1 << 62, Start: []byte("a\x00"), Binding: ListBinding(keyrange.Range{Key: []byte("a"), End: []byte("b")}, kv.RangeOptions{})},
	} {
		got, ok := ParseListPage(p.Payload())
		if !ok || got.Rev != p.Rev || got.Binding != p.Binding || !bytes.Equal(got.Start, p.Start) {
			t.Errorf("parseListPage(payload(%+v)) = %+v, %v", p, got, ok)
		}
	}
	for name, b := range map[string][]byte{
		"empty": nil, "revision 0": append([]byte{0}, make([]byte, ListBindingSize)...),
		"short binding": {5, 0, 0}, "varint overflow": bytes.Repeat([]byte{0xff}, 11),
		"revision 2^62+1": ListPage{Rev: 1<<62 + 1}.Payload(),
	} {
		if p, ok := ParseListPage(b); ok {
			t.Errorf("parseListPage(%s) = %+v, want refused", name, p)
		}
	}
	a := keyrange.Range{Key: []byte("a"), End: []byte("b")}
	for name, other := range map[string]struct {
		sel keyrange.Range
		o   kv.RangeOptions
	}{
		"another end":         {keyrange.Range{Key: []byte("a"), End: []byte("c")}, kv.RangeOptions{}},
		"another key":         {keyrange.Range{Key: []byte("a\x00"), End: []byte("b")}, kv.RangeOptions{}},
		"key and end shifted": {keyrange.Range{Key: []byte("ab"), End: []byte{}}, kv.RangeOptions{}},
		"a filter":            {a, kv.RangeOptions{MinModRevision: 3}},
		"another filter":      {a, kv.RangeOptions{MaxCreateRevision: 3}},
	} {
		if ListBinding(a, kv.RangeOptions{}) == ListBinding(other.sel, other.o) {
			t.Errorf("listBinding(%s) = listBinding([a, b)), want them apart", name)
		}
	}
}
