package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"sync"
	"time"
)

// claims are what a token stands for: its user, by name and ID, and the
// user's password revision and auth's generation when it was issued. A
// token is good while all are still the user's and auth's
// (Store.Session): the user deleted (even if created again under the
// name), a password change, or auth turned off and on, ends it wherever
// it was issued.
type claims struct {
	user       string
	id         userID
	password   int64
	generation int64
}

// tokenIssuer issues tokens and reads them back: random ones held in
// memory by the store that issued them (tokens), or signed ones that
// every store sharing the key reads (signedTokens, for gateways).
type tokenIssuer interface {
	issue(c claims, ttl time.Duration) (string, error)
	// read returns the claims of a token it issued and how long the
	// token has left, if it has not expired.
	read(tok string) (claims, time.Duration, bool)
	// revokeUser and clear forget tokens that can no longer be good,
	// where tokens are held.
	revokeUser(name string)
	clear()
}

// tokens are the issued tokens, held in memory. They are looked up by
// their SHA-256, so the lookup's timing says nothing about a token.
type tokens struct {
	now func() time.Time
	mu  sync.Mutex
	m   map[[32]byte]tokenInfo
	// issued counts issues since the last sweep of expired tokens.
	issued int
}

type tokenInfo struct {
	claims
	expires time.Time
}

func newTokens(now func() time.Time) *tokens {
	return &tokens{now: now, m: make(map[[32]byte]tokenInfo)}
}

// issue returns a new token for c valid for ttl.
func (t *tokens) issue(c claims, ttl time.Duration) (string, error) {
	var raw [32]byte
	_, _ = rand.Read(raw[:]) // crypto/rand.Read never fails
	tok := base64.RawURLEncoding.EncodeToString(raw[:])
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	t.issued++
	if t.issued >= 1024 {
		t.issued = 0
		for h, info := range t.m {
			if !now.Before(info.expires) {
				delete(t.m, h)
			}
		}
	}
	t.m[tokenHash(tok)] = tokenInfo{claims: c, expires: now.Add(ttl)}
	return tok, nil
}

// read returns what a valid token stands for, and how long it has left.
func (t *tokens) read(tok string) (claims, time.Duration, bool) {
	h := tokenHash(tok)
	t.mu.Lock()
	defer t.mu.Unlock()
	info, ok := t.m[h]
	if !ok {
		return claims{}, 0, false
	}
	left := info.expires.Sub(t.now())
	if left <= 0 {
		delete(t.m, h)
		return claims{}, 0, false
	}
	return info.claims, left, true
}

// tokenHash is the key of tok. It hashes from a buffer on the stack, so
// a lookup of a token of the usual size allocates nothing.
func tokenHash(tok string) [32]byte {
	var buf [64]byte
	return sha256.Sum256(append(buf[:0], tok...))
}

func (t *tokens) revokeUser(user string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for h, info := range t.m {
		if info.user == user {
			delete(t.m, h)
		}
	}
}

func (t *tokens) clear() {
	t.mu.Lock()
	defer t.mu.Unlock()
	clear(t.m)
}
