package httpapi

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"math"

	"github.com/httpkv/httpkv/mvcc"
)

// A page token is base64url of
//
//	version | kind | payload | HMAC-SHA256(key, version | kind | payload | binding)
//
// The kind says which endpoint issued it, so a token of one cannot be
// played to another; the binding is what the token belongs to but does
// not carry (the request's key range), so a token presented with any
// other range fails its MAC instead of being trusted for it.
const (
	pageTokenFormat  byte = 1
	tokenKindHistory byte = 'h'
	// tokenKeyBytes is the size of a random signing key.
	tokenKeyBytes = 32
)

// tokenSigner signs and checks page tokens, so that a client can neither
// forge one nor alter the position or window of one it was given.
type tokenSigner struct {
	key []byte
}

// newTokenSigner signs with key, or with a random key when key is empty:
// tokens then stay valid only as long as the process.
func newTokenSigner(key []byte) tokenSigner {
	if len(key) == 0 {
		key = make([]byte, tokenKeyBytes)
		_, _ = rand.Read(key) // never fails: crypto/rand crashes the program instead
	}
	return tokenSigner{key: bytes.Clone(key)}
}

func (s tokenSigner) mac(msg []byte, binding KeyRange) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write(msg)
	// Length-prefixed, and an absent end told from any present one.
	var n []byte
	n = binary.AppendUvarint(n, uint64(len(binding.Key)))
	m.Write(n)
	m.Write(binding.Key)
	if binding.End == nil {
		m.Write([]byte{0})
	} else {
		m.Write(binary.AppendUvarint([]byte{1}, uint64(len(binding.End))))
		m.Write(binding.End)
	}
	return m.Sum(nil)
}

// seal returns the token of payload, of kind, bound to binding.
func (s tokenSigner) seal(kind byte, payload []byte, binding KeyRange) string {
	b := append([]byte{pageTokenFormat, kind}, payload...)
	b = append(b, s.mac(b, binding)...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// open returns the payload of a token of kind sealed with binding, or
// false for anything else.
func (s tokenSigner) open(kind byte, token string, binding KeyRange) ([]byte, bool) {
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(b) < 2+sha256.Size || b[0] != pageTokenFormat || b[1] != kind {
		return nil, false
	}
	msg, sum := b[:len(b)-sha256.Size], b[len(b)-sha256.Size:]
	if !hmac.Equal(sum, s.mac(msg, binding)) {
		return nil, false
	}
	return msg[2:], true
}

// historyToken is where the next page of a history read starts, and the
// read it belongs to: the window the first page fixed, the order and the
// filters. The key range is the token's binding.
type historyToken struct {
	start, end int64
	next       mvcc.Revision
	descend    bool
	noPut      bool
	noDelete   bool
}

const (
	historyDescend byte = 1 << iota
	historyNoPut
	historyNoDelete
	historyFlags = historyDescend | historyNoPut | historyNoDelete
)

func (s tokenSigner) sealHistory(t historyToken, sel KeyRange) string {
	var b []byte
	for _, n := range []int64{t.start, t.end, t.next.Main, t.next.Sub} {
		b = binary.AppendUvarint(b, uint64(n))
	}
	var flags byte
	if t.descend {
		flags |= historyDescend
	}
	if t.noPut {
		flags |= historyNoPut
	}
	if t.noDelete {
		flags |= historyNoDelete
	}
	return s.seal(tokenKindHistory, append(b, flags), sel)
}

func (s tokenSigner) openHistory(token string, sel KeyRange) (historyToken, bool) {
	b, ok := s.open(tokenKindHistory, token, sel)
	if !ok {
		return historyToken{}, false
	}
	var n [4]int64
	for i := range n {
		v, size := binary.Uvarint(b)
		if size <= 0 || v > math.MaxInt64 {
			return historyToken{}, false
		}
		n[i], b = int64(v), b[size:]
	}
	if len(b) != 1 || b[0]&^historyFlags != 0 {
		return historyToken{}, false
	}
	return historyToken{
		start: n[0], end: n[1], next: mvcc.Revision{Main: n[2], Sub: n[3]},
		descend: b[0]&historyDescend != 0, noPut: b[0]&historyNoPut != 0, noDelete: b[0]&historyNoDelete != 0,
	}, true
}
