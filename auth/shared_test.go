package auth_test

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/httpkv/httpkv/auth"
)

// sharedStores returns two stores over one in-memory backend, as two
// gateways over one cluster: tokens signed with one key, and a Write
// that reloads the writer's state first when the other wrote since it
// last read (the stale check a gateway's etcd txn makes), answering
// ErrStale. b also syncs before each change (Config.Sync); a does not.
func sharedStores(tb testing.TB) (a, b *auth.Store, c *clock, m *memBackend) {
	tb.Helper()
	c, m = newClock(), newMemBackend()
	key := func() ([]byte, error) { return []byte("a key both stores share"), nil }
	seen := map[*auth.Store]int{}
	var stores [2]*auth.Store
	for i := range stores {
		var s *auth.Store
		// sync reloads s if the other store wrote since s last read.
		sync := func() (bool, error) {
			m.mu.Lock()
			stale := seen[s] != m.writes
			m.mu.Unlock()
			if !stale {
				return false, nil
			}
			if err := s.Reload(m.forEach); err != nil {
				return false, err
			}
			m.mu.Lock()
			seen[s] = m.writes
			m.mu.Unlock()
			return true, nil
		}
		write := func(fn func(auth.Bucket) error) error {
			if stale, err := sync(); stale || err != nil {
				return errors.Join(auth.ErrStale, err)
			}
			if err := m.write(fn); err != nil {
				return err
			}
			m.mu.Lock()
			seen[s] = m.writes
			m.mu.Unlock()
			return nil
		}
		cfg := auth.Config{TokenTTL: testTTL, Now: c.Now, BcryptCost: bcrypt.MinCost}
		sh := shared{key: key, sync: func() error { return nil }}
		if i == 1 {
			// b syncs before a change; a finds out on writing.
			sh.sync = func() error { _, err := sync(); return err }
		}
		s = auth.New(auth.WriteFunc(write), sh, cfg)
		stores[i] = s
	}
	return stores[0], stores[1], c, m
}

// TestSignedTokensAcrossStores: a token issued by one store is read by
// another sharing its key, and stops working there once the change that
// ends it (a password change, auth turned off and on, the user deleted
// and created again) made through the first reaches the second (Reload). A token altered or
// signed with another key is refused; an expired one too.
func TestSignedTokensAcrossStores(t *testing.T) {
	a, b, c, m := sharedStores(t)
	withRoot(t, a)
	mustDo(t, `AddUser("alice")`, a.AddUser("alice", "pw"))
	mustDo(t, "Reload", b.Reload(m.forEach))
	tok := login(t, a, "alice", "pw")
	wantUser(t, b, tok, "alice")

	for name, tc := range map[string]string{
		"altered":   strings.Replace(tok, tok[len(tok)/3:len(tok)/3+1], "A", 1),
		"no seal":   strings.Split(tok, ".")[0],
		"truncated": tok[:len(tok)-4],
		"huge":      strings.Repeat("A", 1<<20),
	} {
		if tc == tok {
			continue
		}
		wantNoUser(t, b, tc, "of a token "+name)
	}
	other := auth.New(nil, shared{key: func() ([]byte, error) { return []byte("another key"), nil }}, auth.Config{Now: c.Now})
	mustDo(t, "Reload", other.Reload(m.forEach))
	wantNoUser(t, other, tok, "under another key")

	mustDo(t, "ChangePassword", a.ChangePassword("alice", "new"))
	wantUser(t, b, tok, "alice") // b has not heard of it yet
	mustDo(t, "Reload", b.Reload(m.forEach))
	wantNoUser(t, b, tok, "after alice's password changed through a")

	tok = login(t, b, "alice", "new")
	mustDo(t, "SetEnabled(false)", a.SetEnabled(false))
	mustDo(t, "SetEnabled(true)", a.SetEnabled(true))
	mustDo(t, "Reload", b.Reload(m.forEach))
	wantNoUser(t, b, tok, "after auth was turned off and on through a")

	// root deletes bob and creates another bob: his password revision
	// is the first bob's, his tokens are not.
	mustDo(t, `AddUser("bob")`, a.AddUser("bob", "pw"))
	mustDo(t, "Reload", b.Reload(m.forEach))
	tok = login(t, b, "bob", "pw")
	mustDo(t, `DeleteUser("bob")`, a.DeleteUser("bob"))
	mustDo(t, `AddUser("bob") again`, a.AddUser("bob", "pw"))
	wantNoUser(t, a, tok, "after bob was deleted and created again")
	mustDo(t, "Reload", b.Reload(m.forEach))
	wantNoUser(t, b, tok, "after bob was deleted and created again through a")
	wantUser(t, b, login(t, a, "bob", "pw"), "bob")

	tok = login(t, b, "alice", "new")
	c.Advance(testTTL)
	wantNoUser(t, a, tok, "once expired")
}

// TestStaleChangeCheckedAgain: a change made through a store whose state
// is behind is checked again against the state the other store wrote:
// a role deleted elsewhere cannot be granted, and a user added elsewhere
// cannot be added again.
func TestStaleChangeCheckedAgain(t *testing.T) {
	a, b, _, _ := sharedStores(t)
	mustDo(t, `AddRole("r")`, a.AddRole("r"))
	mustDo(t, `AddUser("u")`, a.AddUser("u", "pw"))
	// b has read nothing: its first write finds the state moved on.
	if err := b.AddUser("u", "pw"); !errors.Is(err, auth.ErrUserExists) {
		t.Fatalf("AddUser(u) through the store behind = %v, want ErrUserExists", err)
	}
	mustDo(t, `DeleteRole("r")`, a.DeleteRole("r"))
	if err := b.GrantRole("u", "r"); !errors.Is(err, auth.ErrRoleNotFound) {
		t.Fatalf("GrantRole(u, r) through the store behind, r deleted = %v, want ErrRoleNotFound", err)
	}
	// b syncs before it checks: a role a added is there to grant.
	mustDo(t, `AddRole("r2") through a`, a.AddRole("r2"))
	if err := b.GrantRole("u", "r2"); err != nil {
		t.Fatalf("GrantRole(u, r2) through b, r2 added through a = %v", err)
	}
	if u, err := b.GetUser("u"); err != nil || len(u.Roles) != 1 || u.Roles[0] != "r2" {
		t.Fatalf("GetUser(u) = %+v, %v; want role r2", u, err)
	}
	// a does not sync: its write finds the state moved on (b granted
	// r2), reloads it, and checks again.
	mustDo(t, `AddRole("r3") through b`, b.AddRole("r3"))
	if err := a.AddRole("r3"); !errors.Is(err, auth.ErrRoleExists) {
		t.Fatalf("AddRole(r3) through a, r3 added through b = %v, want ErrRoleExists once checked again", err)
	}
	if got := a.Roles(); len(got) != 2 {
		t.Fatalf("a's roles after its stale write = %v, want [r2 r3]", got)
	}
}

// TestReloadSignalsChange: Reload tells streams to check again.
func TestReloadSignalsChange(t *testing.T) {
	a, b, _, m := sharedStores(t)
	changed := b.Changed()
	mustDo(t, `AddRole("r")`, a.AddRole("r"))
	mustDo(t, "Reload", b.Reload(m.forEach))
	select {
	case <-changed:
	default:
		t.Fatal("Reload did not signal Changed")
	}
	if got := b.Roles(); len(got) != 1 || got[0] != "r" {
		t.Fatalf("b's roles after Reload = %v, want [r]", got)
	}
}

// shared is an auth.Shared made of functions.
type shared struct {
	key  func() ([]byte, error)
	sync func() error
}

func (s shared) TokenKey() ([]byte, error) { return s.key() }
func (s shared) Sync() error {
	if s.sync == nil {
		return nil
	}
	return s.sync()
}

// TestTokenLongerThanTTLRefused: a token whose expiry lies further ahead
// than the store's TTL (and the clock skew allowed) is refused, though
// its seal is good: one issued under a longer --auth-token-ttl, or forged
// by whoever holds the key. One from a store whose clock is a little
// ahead is read. Before, a forged token of a year was accepted.
func TestTokenLongerThanTTLRefused(t *testing.T) {
	a, b, c, m := sharedStores(t)
	withRoot(t, a)
	mustDo(t, `AddUser("alice")`, a.AddUser("alice", "pw"))
	mustDo(t, "Reload", b.Reload(m.forEach))
	key := func() ([]byte, error) { return []byte("a key both stores share"), nil }
	forger := auth.New(nil, shared{key, noSync}, auth.Config{Now: c.Now, TokenTTL: 365 * 24 * time.Hour, BcryptCost: bcrypt.MinCost})
	mustDo(t, "Reload", forger.Reload(m.forEach))
	long, _, err := forger.Authenticate("alice", "pw", "127.0.0.1")
	mustDo(t, "Authenticate through the store of a year", err)
	wantNoUser(t, b, long, "of a year")
	ahead := auth.New(nil, shared{key, noSync}, auth.Config{Now: func() time.Time { return c.Now().Add(auth.TokenClockSkew / 2) }, TokenTTL: testTTL, BcryptCost: bcrypt.MinCost})
	mustDo(t, "Reload", ahead.Reload(m.forEach))
	wantUser(t, b, login(t, ahead, "alice", "pw"), "alice")
	farAhead := auth.New(nil, shared{key, noSync}, auth.Config{Now: func() time.Time { return c.Now().Add(2 * auth.TokenClockSkew) }, TokenTTL: testTTL, BcryptCost: bcrypt.MinCost})
	mustDo(t, "Reload", farAhead.Reload(m.forEach))
	wantNoUser(t, b, login(t, farAhead, "alice", "pw"), "from a store whose clock is far ahead")
}

// noSync is the Sync of a store that only reads.
func noSync() error { return nil }

// TestTokenOfUnloadedChange: a token issued by one store right after a
// change the other has not loaded yet (its user just created) is read by
// the other, which catches up first; a token that stays bad (its user
// deleted) makes the other catch up at most once per catchUpGap, however
// many requests bring it at once.
func TestTokenOfUnloadedChange(t *testing.T) {
	a, _, c, m := sharedStores(t)
	var syncs atomic.Int64
	var b *auth.Store
	sh := shared{
		key:  func() ([]byte, error) { return []byte("a key both stores share"), nil },
		sync: func() error { syncs.Add(1); return b.Reload(m.forEach) },
	}
	b = auth.New(nil, sh, auth.Config{TokenTTL: testTTL, Now: c.Now, BcryptCost: bcrypt.MinCost})
	withRoot(t, a)
	mustDo(t, `AddUser("carol")`, a.AddUser("carol", "pw"))
	tok := login(t, a, "carol", "pw")
	wantUser(t, b, tok, "carol")
	if n := syncs.Load(); n != 1 {
		t.Fatalf("b synced %d times to read a token of a user it had not loaded, want 1", n)
	}
	wantUser(t, b, tok, "carol")
	if n := syncs.Load(); n != 1 {
		t.Fatalf("b synced %d times in all for a token it knew, want 1", n)
	}

	mustDo(t, `DeleteUser("carol")`, a.DeleteUser("carol"))
	mustDo(t, "Reload", b.Reload(m.forEach)) // as b's watch of the shared state would
	start, before := time.Now(), syncs.Load()
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			for range 4 {
				if _, err := b.UserOf(tok); !errors.Is(err, auth.ErrUnauthenticated) {
					t.Errorf("UserOf(token of a deleted user) = %v, want ErrUnauthenticated", err)
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	// The first sync may start at once; each next one a gap later.
	n, most := syncs.Load()-before, int64(time.Since(start)/auth.CatchUpGap)+1
	if n < 1 || n > most {
		t.Errorf("256 requests with a deleted user's token made b sync %d times in %v, want 1 to %d", n, time.Since(start), most)
	}
}
