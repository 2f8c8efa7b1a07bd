package auth

import (
	"bytes"
	"slices"
	"sort"

	"github.com/httpkv/httpkv/kv"
)

// AddRole creates a role with no permissions.
func (s *Store) AddRole(name string) error {
	if err := validName("role", name); err != nil {
		return err
	}
	r := &roleRecord{Name: name}
	return s.change(func() error {
		if _, ok := s.roles[name]; ok {
			return kv.Errorf(ErrRoleExists, "the role %q already exists", name)
		}
		return nil
	}, func(b Bucket) error {
		return putJSON(b, rolesBucket, name, r)
	}, func() { s.roles[name] = r })
}

// DeleteRole removes a role and takes it from every user that has it.
func (s *Store) DeleteRole(name string) error {
	var changed []*userRecord
	return s.change(func() error {
		if _, ok := s.roles[name]; !ok {
			return roleNotFound(name)
		}
		if name == RootRole && s.enabled {
			return invalidf("the root role cannot be deleted while auth is enabled")
		}
		changed = nil
		for _, u := range s.users {
			if slices.Contains(u.Roles, name) {
				c := *u
				c.Roles = slices.DeleteFunc(slices.Clone(u.Roles), func(r string) bool { return r == name })
				changed = append(changed, &c)
			}
		}
		return nil
	}, func(b Bucket) error {
		for _, u := range changed {
			if err := putJSON(b, usersBucket, u.Name, u); err != nil {
				return err
			}
		}
		return b.UnsafeDelete(rolesBucket, []byte(name))
	}, func() {
		delete(s.roles, name)
		for _, u := range changed {
			s.users[u.Name] = u
		}
	})
}

// GetRole returns a role.
func (s *Store) GetRole(name string) (Role, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, ok := s.roles[name]
	if !ok {
		return Role{}, roleNotFound(name)
	}
	return Role{Name: r.Name, Permissions: slices.Clone(r.Permissions)}, nil
}

// Roles returns every role's name, sorted.
func (s *Store) Roles() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	names := make([]string, 0, len(s.roles))
	for n := range s.roles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// GrantPermission adds p to a role; a permission on the same range is
// replaced (its access becomes p's).
func (s *Store) GrantPermission(role string, p Permission) error {
	if len(p.Key) == 0 {
		return invalidf("a permission needs a key")
	}
	if p.Access < Read || p.Access > ReadWrite {
		return invalidf("access must be read, write or readwrite")
	}
	var r roleRecord
	return s.change(func() error {
		cur, ok := s.roles[role]
		if !ok {
			return roleNotFound(role)
		}
		r = roleRecord{Name: cur.Name, Permissions: append(withoutRange(cur.Permissions, p.Key, p.End), p)}
		return nil
	}, func(b Bucket) error {
		return putJSON(b, rolesBucket, role, &r)
	}, func() { s.roles[role] = &r })
}

// RevokePermission removes the role's permission on exactly (key, end).
func (s *Store) RevokePermission(role string, key, end []byte) error {
	var r roleRecord
	return s.change(func() error {
		cur, ok := s.roles[role]
		if !ok {
			return roleNotFound(role)
		}
		r = roleRecord{Name: cur.Name, Permissions: withoutRange(cur.Permissions, key, end)}
		if len(r.Permissions) == len(cur.Permissions) {
			return kv.Errorf(ErrPermissionNotFound, "the role %q has no permission on exactly this range: revoke takes the key and range_end it was granted with", role)
		}
		return nil
	}, func(b Bucket) error {
		return putJSON(b, rolesBucket, role, &r)
	}, func() { s.roles[role] = &r })
}

// withoutRange returns a copy of perms without the permission on exactly
// (key, end).
func withoutRange(perms []Permission, key, end []byte) []Permission {
	var out []Permission
	for _, p := range perms {
		if !bytes.Equal(p.Key, key) || !bytes.Equal(p.End, end) {
			out = append(out, p)
		}
	}
	return out
}
