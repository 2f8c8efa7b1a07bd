package wire

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
)

// Tokens the server hands to clients and takes back (the next_page_token
// of a list, and of other paged reads) are sealed: a client can hold and
// return one, not make or alter one. A token that the server did not issue
// is refused before anything in it is believed.
//
// Wire form, base64url without padding:
//
//	format (1 byte) | kind (1 byte) | payload | HMAC-SHA256(key, format|kind|payload) (32 bytes)
//
// The kind keeps a token of one endpoint from being replayed at another,
// which may read its payload differently. The key is the backend's
// (Backend.PageTokenKey): gateways that share one key accept each other's
// tokens; the embedded store draws a random one unless it is configured,
// so tokens do not outlive the process.
//
// Sealing authenticates; it does not hide: a payload holds nothing the
// client may not see (revisions, and keys of ranges it was allowed to
// read).

// tokenFormat is the first byte of every token. Format 1 was an unkeyed
// page token; those are refused.
const tokenFormat byte = 2

// Token kinds: one per endpoint that hands tokens out.
const (
	TokenListPage byte = 1
	TokenHistory  byte = 2
	TokenLeases   byte = 3
)

// TokenKeyBytes is the size of the key made when none is configured.
const TokenKeyBytes = 32

// ErrBadToken: the token was not sealed by this key for this kind.
var ErrBadToken = errors.New("not a token issued by this server for this request")

// Tokens seals and opens tokens with one key.
type Tokens struct {
	key []byte
}

// NewTokens returns a codec for key, or for a fresh random key when
// key is empty.
func NewTokens(key []byte) Tokens {
	if len(key) == 0 {
		key = make([]byte, TokenKeyBytes)
		_, _ = rand.Read(key) // never fails: it crashes the process instead
	}
	return Tokens{key: append([]byte(nil), key...)}
}

// Seal returns the token of kind holding payload.
func (c Tokens) Seal(kind byte, payload []byte) string {
	b := make([]byte, 0, 2+len(payload)+sha256.Size)
	b = append(b, tokenFormat, kind)
	b = append(b, payload...)
	b = append(b, c.tag(b)...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Open returns the payload of a token that Seal made for kind with this
// codec's key, or ErrBadToken. Only the one spelling Seal gives a token
// opens: the decoder would skip line breaks and ignore stray low bits,
// and a token must not have spellings that pass for other tokens.
func (c Tokens) Open(kind byte, token string) ([]byte, error) {
	if strings.ContainsAny(token, "\r\n") {
		return nil, ErrBadToken
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(token)
	if err != nil || len(b) < 2+sha256.Size || b[0] != tokenFormat || b[1] != kind {
		return nil, ErrBadToken
	}
	body, tag := b[:len(b)-sha256.Size], b[len(b)-sha256.Size:]
	if !hmac.Equal(c.tag(body), tag) {
		return nil, ErrBadToken
	}
	return body[2:], nil
}

// tag returns the HMAC-SHA256 of data under the codec's key.
func (c Tokens) tag(data []byte) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write(data)
	return m.Sum(nil)
}
