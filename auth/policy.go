package auth

import (
	"errors"
	"time"

	"github.com/httpkv/httpkv/keyrange"
)

// Need is everything one request can touch: the ranges it reads, the
// ranges it writes, and whether it is an administrative operation. The
// API collects it from a request; the policy below decides it. A request
// is allowed only if every range is covered in full, not merely
// overlapped.
type Need struct {
	Read  []keyrange.Range
	Write []keyrange.Range
	// Admin marks operations reserved to the root role: compaction,
	// defrag, alarms, status details, auth administration.
	Admin bool
}

// Why a stream's caller stopped being allowed, as Recheck reports it.
var (
	ErrTokenExpired = errors.New("auth: token expired")
	ErrTokenRevoked = errors.New("auth: token revoked")
	ErrUserDeleted  = errors.New("auth: user deleted")
	ErrAuthDisabled = errors.New("auth: auth disabled")
	ErrAuthEnabled  = errors.New("auth: auth enabled: a token is needed")
)

// Authorize decides n for the caller holding token: nil while auth is
// disabled; ErrUnauthenticated for a missing or bad token; else as
// AuthorizeUser decides for the token's user.
func (s *Store) Authorize(token string, n Need) error {
	if !s.Enabled() {
		return nil
	}
	user, err := s.UserOf(token)
	if err != nil {
		return err
	}
	return s.AuthorizeUser(user, n)
}

// AuthorizeUser decides n for an authenticated user: the root role may do
// everything; anyone else may not do administrative operations, and needs
// permissions covering every range n reads and every range it writes.
// It returns nil or ErrPermissionDenied, which never names the range.
func (s *Store) AuthorizeUser(user string, n Need) error {
	p := s.Permissions(user)
	if p.Root() {
		return nil
	}
	if n.Admin {
		return ErrPermissionDenied
	}
	for _, r := range n.Read {
		if !p.Allowed(Read, r.Key, r.End) {
			return ErrPermissionDenied
		}
	}
	for _, r := range n.Write {
		if !p.Allowed(Write, r.Key, r.End) {
			return ErrPermissionDenied
		}
	}
	return nil
}

// Unrestricted reports whether the caller holding token may do anything:
// auth is disabled, or the token is a root user's. A check that must list
// keys (those attached to a lease) is skipped for such a caller.
func (s *Store) Unrestricted(token string) bool {
	if !s.Enabled() {
		return true
	}
	user, err := s.UserOf(token)
	return err == nil && s.Permissions(user).Root()
}

// Caller is who opened a stream: the user, the token it came with ("" when
// auth was off), and when that token expires (zero without one). Recheck
// decides again for it whenever the state changes.
type Caller struct {
	User    string
	Token   string
	Expires time.Time
}

// Identify returns the caller holding token: no one while auth is
// disabled, else the token's user and when the token expires.
func (s *Store) Identify(token string) (Caller, error) {
	if !s.Enabled() {
		return Caller{}, nil
	}
	user, left, err := s.Session(token)
	if err != nil {
		return Caller{}, err
	}
	return Caller{User: user, Token: token, Expires: s.cfg.Now().Add(left)}, nil
}

// Recheck decides n for the caller of a stream as things stand now: its
// token must still be good, and still its user's, and the user must still
// be allowed n. A stream opened without a token ends once auth is
// enabled, and one opened with a token ends once auth is disabled (the
// token is gone with it). The error says why: one of the reasons above,
// or ErrPermissionDenied.
func (s *Store) Recheck(c Caller, n Need) error {
	if !s.Enabled() {
		if c.Token != "" {
			return ErrAuthDisabled
		}
		return nil
	}
	if c.Token == "" {
		return ErrAuthEnabled
	}
	if _, err := s.GetUser(c.User); err != nil {
		return ErrUserDeleted
	}
	if user, _, err := s.Session(c.Token); err != nil || user != c.User {
		if !s.cfg.Now().Before(c.Expires) {
			return ErrTokenExpired
		}
		return ErrTokenRevoked // a password change, or a restart of auth
	}
	return s.AuthorizeUser(c.User, n)
}
