package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"sync"
	"time"
)

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
	user    string
	expires time.Time
}

func newTokens(now func() time.Time) *tokens {
	return &tokens{now: now, m: make(map[[32]byte]tokenInfo)}
}

// issue returns a new token for user valid for ttl.
func (t *tokens) issue(user string, ttl time.Duration) string {
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
	t.m[tokenHash(tok)] = tokenInfo{user: user, expires: now.Add(ttl)}
	return tok
}

// user returns the user a valid token belongs to, and how long it has
// left.
func (t *tokens) user(tok string) (string, time.Duration, bool) {
	h := tokenHash(tok)
	t.mu.Lock()
	defer t.mu.Unlock()
	info, ok := t.m[h]
	if !ok {
		return "", 0, false
	}
	left := info.expires.Sub(t.now())
	if left <= 0 {
		delete(t.m, h)
		return "", 0, false
	}
	return info.user, left, true
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
