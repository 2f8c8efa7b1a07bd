package auth

import "errors"

// ErrStale is what a Config.Write returns when the state it would change
// was changed elsewhere (by another store of the deployment: gateways in
// front of one cluster) since this store read it. The Write has reloaded
// the state first (Reload); the change is then checked against it and
// written again.
var ErrStale = errors.New("auth: changed elsewhere since it was read; check again")

// Reload replaces users, roles and the enabled flag with the persisted
// ones read through forEach, as Restore reads them: a store whose state
// is shared (kept in etcd, changed through any gateway) follows the
// changes made through the others. Tokens held here that can no longer
// be good are forgotten, merged permissions are merged again, and
// Changed is signalled, so that streams check their callers again.
func (s *Store) Reload(forEach ForEachFunc) error {
	fresh := &Store{users: make(map[string]*userRecord), roles: make(map[string]*roleRecord)}
	if err := fresh.Restore(forEach); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, u := range s.users {
		if nu, ok := fresh.users[name]; !ok || nu.id() != u.id() || nu.Password != u.Password {
			s.tokens.revokeUser(name)
		}
	}
	if fresh.enabled != s.enabled || fresh.generation != s.generation {
		s.tokens.clear()
	}
	s.users, s.roles = fresh.users, fresh.roles
	s.enabled, s.generation = fresh.enabled, fresh.generation
	s.grants = make(map[string]*grants)
	close(s.changed)
	s.changed = make(chan struct{})
	return nil
}
