package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"strings"
	"time"
)

// signedTokens are tokens that carry their claims and their expiry,
// sealed with HMAC-SHA256 under a key every store of a deployment shares
// (Shared.TokenKey): gateways in front of one cluster each read the
// tokens the others issued, and none holds tokens. What a held token's
// revocation does, the claims do instead: a token names its user's ID
// and password revision and auth's generation, and Store.Session refuses
// it once any has moved on; a deleted user's tokens name a user that is
// gone, and one created again under the name has another ID.
//
// Wire form: base64url(payload) "." base64url(HMAC-SHA256(key, payload)),
// the payload being
//
//	version (2) | expiry, Unix nanoseconds (8) | password revision (8) |
//	generation (8) | user ID (16) | user name
//
// Version 1 had no user ID; its tokens are refused.
type signedTokens struct {
	now func() time.Time
	key func() ([]byte, error)
}

const (
	signedVersion byte = 2
	signedHeader       = 1 + 3*8 + len(userID{})
	// maxSignedToken bounds what read decodes: a payload of the longest
	// user name, its seal and the separator, in base64.
	maxSignedToken = 4 * (signedHeader + 256 + sha256.Size + 6) / 3
)

func (t signedTokens) issue(c claims, ttl time.Duration) (string, error) {
	key, err := t.key()
	if err != nil {
		return "", err
	}
	p := make([]byte, 0, signedHeader+len(c.user))
	p = append(p, signedVersion)
	p = binary.BigEndian.AppendUint64(p, uint64(t.now().Add(ttl).UnixNano()))
	p = binary.BigEndian.AppendUint64(p, uint64(c.password))
	p = binary.BigEndian.AppendUint64(p, uint64(c.generation))
	p = append(p, c.id[:]...)
	p = append(p, c.user...)
	enc := base64.RawURLEncoding
	return enc.EncodeToString(p) + "." + enc.EncodeToString(seal(key, p)), nil
}

func seal(key, payload []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(payload)
	return m.Sum(nil)
}

func (t signedTokens) read(tok string) (claims, time.Duration, bool) {
	if len(tok) > maxSignedToken {
		return claims{}, 0, false
	}
	body, sig, ok := strings.Cut(tok, ".")
	if !ok {
		return claims{}, 0, false
	}
	enc := base64.RawURLEncoding
	p, err1 := enc.DecodeString(body)
	mac, err2 := enc.DecodeString(sig)
	key, err3 := t.key()
	if err1 != nil || err2 != nil || err3 != nil || len(p) < signedHeader || p[0] != signedVersion ||
		!hmac.Equal(mac, seal(key, p)) {
		return claims{}, 0, false
	}
	expires := time.Unix(0, int64(binary.BigEndian.Uint64(p[1:])))
	left := expires.Sub(t.now())
	if left <= 0 {
		return claims{}, 0, false
	}
	c := claims{
		user:       string(p[signedHeader:]),
		password:   int64(binary.BigEndian.Uint64(p[9:])),
		generation: int64(binary.BigEndian.Uint64(p[17:])),
	}
	copy(c.id[:], p[25:])
	return c, left, true
}

// A signed token is held nowhere: its claims end it (see Store.Session).
func (signedTokens) revokeUser(string) {}
func (signedTokens) clear()            {}
