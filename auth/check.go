package auth

import (
	"bytes"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// dummyHash returns the hash compared against when the user does not
// exist, made at the cost of real hashes so that a wrong name costs as
// much time as a wrong password and does not tell which names exist.
func (s *Store) dummyHash() []byte {
	s.dummyOnce.Do(func() {
		s.dummy, _ = bcrypt.GenerateFromPassword([]byte("not a password"), s.cfg.BcryptCost)
	})
	return s.dummy
}

// Authenticate checks a user's password and returns a new token and its
// lifetime. A name or password that no user can have is refused at once
// (ErrInvalid): it reveals nothing and costs nothing. Otherwise the check
// costs one bcrypt comparison whether the user exists or not, so its
// timing does not tell which names exist. Failed attempts are limited
// per user at the client's address and per client address
// (ErrTooManyAttempts); see limiter.
func (s *Store) Authenticate(name, password, clientAddr string) (string, time.Duration, error) {
	if !s.Enabled() {
		return "", 0, ErrNotEnabled
	}
	if err := validName("user", name); err != nil {
		return "", 0, err
	}
	if password == "" || len(password) > maxPassword {
		return "", 0, invalidf("a password is 1 to %d bytes", maxPassword)
	}
	a := newAttempt(name, clientAddr)
	if !s.limiter.begin(&a) {
		return "", 0, ErrTooManyAttempts
	}
	s.mu.RLock()
	u, ok := s.users[name]
	hash := s.dummyHash()
	if ok {
		hash = u.Hash
	}
	s.mu.RUnlock()
	err := bcrypt.CompareHashAndPassword(hash, []byte(password))
	s.limiter.end(&a, !ok || err != nil)
	if !ok || err != nil {
		return "", 0, ErrBadCredentials
	}
	// Issue under the read lock, and only if the password checked is still
	// the user's and auth still on: a change (password, deletion, disable)
	// revokes tokens under the write lock, so one racing this request
	// either sees the new token and revokes it, or is seen here.
	s.mu.RLock()
	defer s.mu.RUnlock()
	if !s.enabled {
		return "", 0, ErrNotEnabled
	}
	cur, ok := s.users[name]
	if !ok || !bytes.Equal(cur.Hash, hash) {
		return "", 0, ErrBadCredentials
	}
	tok, err := s.tokens.issue(claims{user: name, id: cur.id(), password: cur.Password, generation: s.generation}, s.cfg.TokenTTL)
	if err != nil {
		return "", 0, err
	}
	return tok, s.cfg.TokenTTL, nil
}

// UserOf returns the user a token was issued to, if it is still valid.
func (s *Store) UserOf(token string) (string, error) {
	name, _, err := s.Session(token)
	return name, err
}

// Session returns the user a token was issued to and how long the token
// has left, if it is still valid. A stream opened with the token ends
// when that time is up.
func (s *Store) Session(token string) (user string, left time.Duration, err error) {
	c, left, err := s.session(token)
	return c.user, left, err
}

// Owner returns the user a token was issued to, if it is still valid, by
// name and by ID: what the user makes that outlives the token (a stream
// of many watchers) is hers, not that of a user created again under her
// name once she is deleted, whose ID (UserID) is another.
func (s *Store) Owner(token string) (user, id string, err error) {
	c, _, err := s.session(token)
	return c.user, string(c.id[:]), err
}

// UserID returns the ID of the user named name (see Owner), if there is
// one.
func (s *Store) UserID(name string) (string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	u, ok := s.users[name]
	if !ok {
		return "", false
	}
	id := u.id()
	return string(id[:]), true
}

// session returns the claims of a valid token and how long it has left.
func (s *Store) session(token string) (claims, time.Duration, error) {
	if token == "" {
		return claims{}, 0, ErrUnauthenticated
	}
	c, left, ok := s.tokens.read(token)
	if !ok || left > s.cfg.TokenTTL+TokenClockSkew {
		// A token that outlives any this store issues was issued under
		// another --auth-token-ttl, or forged with the key: refused,
		// whatever its seal, so that a stolen key mints no token for
		// longer than the deployment's tokens live.
		return claims{}, 0, ErrUnauthenticated
	}
	good := s.current(c)
	if !good && s.catchUp != nil && s.catchUp.do() == nil {
		// Sealed with the deployment's key, so issued by one of its
		// stores: perhaps after a change this one has not loaded yet.
		good = s.current(c)
	}
	if !good {
		return claims{}, 0, ErrUnauthenticated
	}
	return c, left, nil
}

// current reports whether a token's claims hold: its user (by name and
// ID), the user's password and auth's generation are those it was issued
// for.
func (s *Store) current(c claims) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	u, exists := s.users[c.user]
	return exists && u.id() == c.id && u.Password == c.password && s.generation == c.generation
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

// Permissions are a user's merged permissions as they were when taken:
// a request checks all its ranges against one state, at the cost of one
// lookup.
type Permissions struct{ g *grants }

// Permissions returns the user's merged permissions; a user that does
// not exist has none.
func (s *Store) Permissions(user string) Permissions { return Permissions{s.userGrants(user)} }

// Root reports whether the user holds the root role.
func (p Permissions) Root() bool { return p.g.root }

// Allowed reports whether the user may have access a on every key of the
// selection (key, end), as Permission reads them.
func (p Permissions) Allowed(a Access, key, end []byte) bool {
	if p.g.root {
		return true
	}
	if a&Read != 0 && !p.g.read.coversSel(key, end) {
		return false
	}
	if a&Write != 0 && !p.g.write.coversSel(key, end) {
		return false
	}
	return true
}

// IsRoot reports whether the user holds the root role.
func (s *Store) IsRoot(user string) bool { return s.Permissions(user).Root() }

// Allowed reports whether the user may have access a on every key of the
// selection (key, end), as Permission reads them.
func (s *Store) Allowed(user string, a Access, key, end []byte) bool {
	return s.Permissions(user).Allowed(a, key, end)
}
