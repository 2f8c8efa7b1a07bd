package auth

import (
	"time"

	"golang.org/x/crypto/bcrypt"
)

// dummyHash is compared against when the user does not exist, so that a
// wrong name costs as much time as a wrong password.
var dummyHash, _ = bcrypt.GenerateFromPassword([]byte("not a password"), bcrypt.MinCost)

// Authenticate checks a user's password and returns a new token and its
// lifetime. Failed attempts are limited per user and per client address
// (ErrTooManyAttempts).
func (s *Store) Authenticate(name, password, clientAddr string) (string, time.Duration, error) {
	if !s.Enabled() {
		return "", 0, ErrNotEnabled
	}
	keys := []string{"user:" + name, "addr:" + clientAddr}
	if !s.limiter.allowed(keys...) {
		return "", 0, ErrTooManyAttempts
	}
	s.mu.RLock()
	u, ok := s.users[name]
	hash := dummyHash
	if ok {
		hash = u.Hash
	}
	s.mu.RUnlock()
	err := bcrypt.CompareHashAndPassword(hash, []byte(password))
	if !ok || err != nil {
		s.limiter.failed(keys...)
		return "", 0, ErrBadCredentials
	}
	return s.tokens.issue(name, s.cfg.TokenTTL), s.cfg.TokenTTL, nil
}

// UserOf returns the user a token was issued to, if it is still valid.
func (s *Store) UserOf(token string) (string, error) {
	if token == "" {
		return "", ErrUnauthenticated
	}
	name, ok := s.tokens.user(token)
	if !ok {
		return "", ErrUnauthenticated
	}
	s.mu.RLock()
	_, exists := s.users[name]
	s.mu.RUnlock()
	if !exists {
		return "", ErrUnauthenticated
	}
	return name, nil
}

// userGrants returns the merged permissions of a user, from the cache
// when the state has not changed since they were merged.
func (s *Store) userGrants(name string) *grants {
	s.mu.RLock()
	g, ok := s.grants[name]
	s.mu.RUnlock()
	if ok {
		return g
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if g, ok := s.grants[name]; ok {
		return g
	}
	g = &grants{}
	if u, ok := s.users[name]; ok {
		var read, write []span
		for _, rn := range u.Roles {
			if rn == RootRole {
				g.root = true
				continue
			}
			r, ok := s.roles[rn]
			if !ok {
				continue
			}
			for _, p := range r.Permissions {
				sp := toSpan(p.Key, p.End)
				if p.Access&Read != 0 {
					read = append(read, sp)
				}
				if p.Access&Write != 0 {
					write = append(write, sp)
				}
			}
		}
		g.read, g.write = newCoverage(read), newCoverage(write)
	}
	s.grants[name] = g
	return g
}

// IsRoot reports whether the user holds the root role.
func (s *Store) IsRoot(user string) bool { return s.userGrants(user).root }

// Allowed reports whether the user may have access a on every key of the
// selection (key, end), as Permission reads them.
func (s *Store) Allowed(user string, a Access, key, end []byte) bool {
	g := s.userGrants(user)
	if g.root {
		return true
	}
	want := toSpan(key, end)
	if a&Read != 0 && !g.read.covers(want) {
		return false
	}
	if a&Write != 0 && !g.write.covers(want) {
		return false
	}
	return true
}
