package auth

import (
	"slices"
	"sort"
	"unicode/utf8"

	"github.com/httpkv/httpkv/kv"
	"golang.org/x/crypto/bcrypt"
)

// validName checks a new user's or role's name. "." and ".." are
// refused: as a segment of the path that names the user or role
// (/v1/auth/users/{name}), browsers and most HTTP clients take them, even
// percent-encoded, for the current or the parent directory, and request
// another path, so such a user could never be read, changed or deleted.
func validName(kind, name string) error {
	if name == "" || len(name) > 256 || !utf8.ValidString(name) {
		return invalidf("a %s name is 1 to 256 bytes of UTF-8", kind)
	}
	if name == "." || name == ".." {
		return invalidf("a %s name cannot be %q: in the path of the %s, clients take it for a directory", kind, name, kind)
	}
	return nil
}

// maxPassword is the longest password bcrypt reads in full.
const maxPassword = 72

func (s *Store) hash(password string) ([]byte, error) {
	if password == "" {
		return nil, invalidf("the password must not be empty")
	}
	if len(password) > maxPassword {
		return nil, invalidf("a password is at most %d bytes", maxPassword)
	}
	return bcrypt.GenerateFromPassword([]byte(password), s.cfg.BcryptCost)
}

// AddUser creates a user.
func (s *Store) AddUser(name, password string) error {
	if err := validName("user", name); err != nil {
		return err
	}
	h, err := s.hash(password)
	if err != nil {
		return err
	}
	u := &userRecord{Name: name, Hash: h, ID: newUserID()}
	return s.change(func() error {
		if _, ok := s.users[name]; ok {
			return kv.Errorf(ErrUserExists, "the user %q already exists", name)
		}
		return nil
	}, func(b Bucket) error {
		return putJSON(b, usersBucket, name, u)
	}, func() { s.users[name] = u })
}

// DeleteUser removes a user; its tokens stop working. The root user cannot
// be deleted while auth is enabled.
func (s *Store) DeleteUser(name string) error {
	return s.change(func() error {
		if _, ok := s.users[name]; !ok {
			return userNotFound(name)
		}
		if name == RootUser && s.enabled {
			return invalidf("the root user cannot be deleted while auth is enabled")
		}
		return nil
	}, func(b Bucket) error {
		return b.UnsafeDelete(usersBucket, []byte(name))
	}, func() {
		delete(s.users, name)
		s.tokens.revokeUser(name)
	})
}

// ChangePassword sets a user's password; its tokens stop working.
func (s *Store) ChangePassword(name, password string) error {
	h, err := s.hash(password)
	if err != nil {
		return err
	}
	var u userRecord
	return s.change(func() error {
		cur, ok := s.users[name]
		if !ok {
			return userNotFound(name)
		}
		u = *cur
		u.Hash, u.Password = h, cur.Password+1
		return nil
	}, func(b Bucket) error {
		return putJSON(b, usersBucket, name, &u)
	}, func() {
		s.users[name] = &u
		s.tokens.revokeUser(name)
	})
}

// GrantRole gives a user a role.
func (s *Store) GrantRole(user, role string) error {
	var u userRecord
	return s.change(func() error {
		cur, ok := s.users[user]
		if !ok {
			return userNotFound(user)
		}
		if _, ok := s.roles[role]; !ok && role != RootRole {
			return roleNotFound(role)
		}
		u = *cur
		if !slices.Contains(u.Roles, role) {
			u.Roles = append(slices.Clone(u.Roles), role)
			sort.Strings(u.Roles)
		}
		return nil
	}, func(b Bucket) error {
		return putJSON(b, usersBucket, user, &u)
	}, func() { s.users[user] = &u })
}

// RevokeRole takes a role from a user. Root keeps the root role while auth
// is enabled.
func (s *Store) RevokeRole(user, role string) error {
	var u userRecord
	return s.change(func() error {
		cur, ok := s.users[user]
		if !ok {
			return userNotFound(user)
		}
		if !slices.Contains(cur.Roles, role) {
			return roleNotFound(role)
		}
		if user == RootUser && role == RootRole && s.enabled {
			return invalidf("root keeps the root role while auth is enabled")
		}
		u = *cur
		u.Roles = slices.DeleteFunc(slices.Clone(u.Roles), func(r string) bool { return r == role })
		return nil
	}, func(b Bucket) error {
		return putJSON(b, usersBucket, user, &u)
	}, func() { s.users[user] = &u })
}

// GetUser returns a user.
func (s *Store) GetUser(name string) (User, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	u, ok := s.users[name]
	if !ok {
		return User{}, userNotFound(name)
	}
	return User{Name: u.Name, Roles: slices.Clone(u.Roles)}, nil
}

// Users returns every user's name, sorted.
func (s *Store) Users() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	names := make([]string, 0, len(s.users))
	for n := range s.users {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
