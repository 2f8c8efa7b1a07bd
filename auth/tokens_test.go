package auth_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/httpkv/httpkv/auth"
)

func TestAuthenticate(t *testing.T) {
	s, _, _ := newStore(t)
	mustDo(t, `AddUser("u")`, s.AddUser("u", "secret"))
	if _, _, err := s.Authenticate("u", "secret", "a"); !errors.Is(err, auth.ErrNotEnabled) {
		t.Fatalf("Authenticate while disabled = %v, want ErrNotEnabled", err)
	}
	withRoot(t, s)
	for _, c := range []struct {
		name, password string
		want           error
	}{
		{"u", "wrong", auth.ErrBadCredentials},
		{"nobody", "secret", auth.ErrBadCredentials},
		// No user has these: refused as invalid at once.
		{"u", "", auth.ErrInvalid},
		{"", "", auth.ErrInvalid},
	} {
		if tok, _, err := s.Authenticate(c.name, c.password, "a"); !errors.Is(err, c.want) || tok != "" {
			t.Errorf("Authenticate(%q, %q) = (%q, %v), want %v", c.name, c.password, tok, err, c.want)
		}
	}
	tok := login(t, s, "u", "secret")
	wantUser(t, s, tok, "u")
	if other := login(t, s, "u", "secret"); other == tok {
		t.Errorf("two logins returned the same token %q", tok)
	}
	wantNoUser(t, s, "", "of an empty token")
	wantNoUser(t, s, tok+"x", "of an unknown token")
}

func TestTokenExpiry(t *testing.T) {
	s, c, _ := newStore(t)
	withRoot(t, s)
	mustDo(t, `AddUser("u")`, s.AddUser("u", "pw"))
	tok := login(t, s, "u", "pw")
	c.Advance(testTTL - time.Nanosecond)
	wantUser(t, s, tok, "u")
	c.Advance(time.Nanosecond)
	wantNoUser(t, s, tok, "at its expiry")
	// Expiry is for good: the clock going back does not revive it.
	c.Advance(-time.Second)
	wantNoUser(t, s, tok, "after it expired, with the clock set back")
	// A new token is counted from its own issue.
	tok = login(t, s, "u", "pw")
	c.Advance(testTTL / 2)
	wantUser(t, s, tok, "u")
}

func TestTokenInvalidation(t *testing.T) {
	s, _, _ := newStore(t)
	withRoot(t, s)
	mustDo(t, `AddUser("u")`, s.AddUser("u", "old"))
	mustDo(t, `AddUser("v")`, s.AddUser("v", "pw"))

	t.Run("password change", func(t *testing.T) {
		tu, tv := login(t, s, "u", "old"), login(t, s, "v", "pw")
		mustDo(t, `ChangePassword("u")`, s.ChangePassword("u", "new"))
		wantNoUser(t, s, tu, "after its user's password changed")
		wantUser(t, s, tv, "v")
		if _, _, err := s.Authenticate("u", "old", "a"); !errors.Is(err, auth.ErrBadCredentials) {
			t.Errorf("Authenticate with the old password = %v, want ErrBadCredentials", err)
		}
		wantUser(t, s, login(t, s, "u", "new"), "u")
	})
	t.Run("user deletion", func(t *testing.T) {
		tu, tv := login(t, s, "u", "new"), login(t, s, "v", "pw")
		mustDo(t, `DeleteUser("u")`, s.DeleteUser("u"))
		wantNoUser(t, s, tu, "after its user was deleted")
		wantUser(t, s, tv, "v")
		// The same name made again does not revive the old token.
		mustDo(t, `AddUser("u") again`, s.AddUser("u", "new"))
		wantNoUser(t, s, tu, "after its user was deleted and made again")
	})
	t.Run("disable and enable", func(t *testing.T) {
		tu, troot := login(t, s, "u", "new"), login(t, s, "root", "rootpw")
		// Enabling what is enabled changes nothing.
		mustDo(t, "SetEnabled(true) again", s.SetEnabled(true))
		wantUser(t, s, tu, "u")
		mustDo(t, "SetEnabled(false)", s.SetEnabled(false))
		mustDo(t, "SetEnabled(true)", s.SetEnabled(true))
		wantNoUser(t, s, tu, "after auth was disabled and enabled")
		wantNoUser(t, s, troot, "of root after auth was disabled and enabled")
	})
	t.Run("role changes keep tokens", func(t *testing.T) {
		tu := login(t, s, "u", "new")
		mustDo(t, `AddRole("r")`, s.AddRole("r"))
		mustDo(t, `GrantRole("u", "r")`, s.GrantRole("u", "r"))
		mustDo(t, `DeleteRole("r")`, s.DeleteRole("r"))
		wantUser(t, s, tu, "u")
	})
}

// TestTokenRacingPasswordChange logs in with a password while it is
// changed: no token issued for the old password may outlive the change,
// even one whose password check finished before the change and whose
// issue came after.
func TestTokenRacingPasswordChange(t *testing.T) {
	s, _, _ := newStore(t)
	withRoot(t, s)
	for round := range 4 {
		name := fmt.Sprintf("u%d", round)
		mustDo(t, "AddUser", s.AddUser(name, "old"))
		var (
			mu        sync.Mutex
			tokens    []string
			wg        sync.WaitGroup
			stop      = make(chan struct{})
			first     = make(chan struct{})
			firstOnce sync.Once
		)
		for g := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					// Distinct addresses: only the per-user limit applies.
					tok, _, err := s.Authenticate(name, "old", fmt.Sprintf("%d-%d", g, i))
					if err != nil {
						continue
					}
					mu.Lock()
					tokens = append(tokens, tok)
					mu.Unlock()
					firstOnce.Do(func() { close(first) })
				}
			}()
		}
		<-first
		mustDo(t, "ChangePassword", s.ChangePassword(name, "new"))
		close(stop)
		wg.Wait()
		for _, tok := range tokens {
			wantNoUser(t, s, tok, "issued for the old password")
		}
	}
}

func TestRateLimit(t *testing.T) {
	t.Run("per user at an address", func(t *testing.T) {
		s, c, _ := newStore(t)
		withRoot(t, s)
		mustDo(t, "AddUser", s.AddUser("u", "pw"))
		for i := range auth.FailedBurst {
			if _, _, err := s.Authenticate("u", "wrong", "10.0.0.1"); !errors.Is(err, auth.ErrBadCredentials) {
				t.Fatalf("failure %d: Authenticate = %v, want ErrBadCredentials", i+1, err)
			}
		}
		// Even the right password from that address is refused now...
		if _, _, err := s.Authenticate("u", "pw", "10.0.0.1"); !errors.Is(err, auth.ErrTooManyAttempts) {
			t.Fatalf("Authenticate from the address after %d failures = %v, want ErrTooManyAttempts", auth.FailedBurst, err)
		}
		// ...but not from another one: no one can lock a user out.
		wantUser(t, s, login(t, s, "u", "pw"), "u") // from 127.0.0.1
		if _, _, err := s.Authenticate("u", "pw", "10.0.0.2"); err != nil {
			t.Fatalf("Authenticate(u) from another address = %v, want a token", err)
		}
		// Other users at the address are not affected.
		mustDo(t, "AddUser", s.AddUser("v", "pw"))
		if _, _, err := s.Authenticate("v", "pw", "10.0.0.1"); err != nil {
			t.Fatalf("Authenticate(v) = %v, want a token", err)
		}
		c.Advance(2 * time.Second)
		tok, _, err := s.Authenticate("u", "pw", "10.0.0.1")
		if err != nil {
			t.Fatalf("Authenticate 2s later = %v, want a token", err)
		}
		wantUser(t, s, tok, "u")
	})
	t.Run("per address across users", func(t *testing.T) {
		s, c, _ := newStore(t)
		withRoot(t, s)
		// A spray: one password tried on many names from one address.
		for i := range auth.AddrBurst {
			if _, _, err := s.Authenticate(fmt.Sprintf("nobody%d", i), "x", "10.0.0.1"); !errors.Is(err, auth.ErrBadCredentials) {
				t.Fatalf("failure %d: Authenticate = %v, want ErrBadCredentials", i+1, err)
			}
		}
		if _, _, err := s.Authenticate("root", "rootpw", "10.0.0.1"); !errors.Is(err, auth.ErrTooManyAttempts) {
			t.Fatalf("Authenticate from the address after %d failures = %v, want ErrTooManyAttempts", auth.AddrBurst, err)
		}
		if _, _, err := s.Authenticate("root", "rootpw", "10.0.0.2"); err != nil {
			t.Fatalf("Authenticate from another address = %v, want a token", err)
		}
		// An IPv6 client is counted by its /64.
		for i := range auth.AddrBurst {
			addr := fmt.Sprintf("2001:db8::%x", i+1)
			if _, _, err := s.Authenticate(fmt.Sprintf("nobody%d", i), "x", addr); !errors.Is(err, auth.ErrBadCredentials) {
				t.Fatalf("failure %d from %s: Authenticate = %v, want ErrBadCredentials", i+1, addr, err)
			}
		}
		if _, _, err := s.Authenticate("root", "rootpw", "2001:db8::ffff"); !errors.Is(err, auth.ErrTooManyAttempts) {
			t.Fatalf("Authenticate from the same /64 = %v, want ErrTooManyAttempts", err)
		}
		c.Advance(auth.AddrEvery)
		if _, _, err := s.Authenticate("root", "rootpw", "10.0.0.1"); err != nil {
			t.Fatalf("Authenticate from the address %v later = %v, want a token", auth.AddrEvery, err)
		}
	})
	t.Run("successes are free", func(t *testing.T) {
		s, _, _ := newStore(t)
		withRoot(t, s)
		for i := range 10 {
			if _, _, err := s.Authenticate("root", "rootpw", "a"); err != nil {
				t.Fatalf("login %d = %v, want a token", i+1, err)
			}
		}
	})
	t.Run("concurrent failures", func(t *testing.T) {
		// The clock stands still: no token comes back during the test, so
		// at most the burst of 5 attempts from one address may reach the
		// password check, however many run at once.
		s, _, _ := newStore(t)
		withRoot(t, s)
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			bad, far int
		)
		for range 64 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _, err := s.Authenticate("root", "wrong", "10.0.0.1")
				mu.Lock()
				defer mu.Unlock()
				switch {
				case errors.Is(err, auth.ErrBadCredentials):
					bad++
				case errors.Is(err, auth.ErrTooManyAttempts):
					far++
				default:
					t.Errorf("Authenticate(wrong password) = %v", err)
				}
			}()
		}
		wg.Wait()
		if bad < 1 || bad > 5 || bad+far != 64 {
			t.Errorf("64 concurrent wrong passwords: %d checked, %d refused; want 1 to 5 checked, the rest refused", bad, far)
		}
	})
}

// TestLoginNamesBounded sends token requests with names no user can
// have (1 MiB each, as in a body up to the request limit) and with many
// distinct unknown names: the first are refused as invalid before
// anything is kept of them, the second answer as a wrong password would,
// and the limiter holds no more than a bounded table.
func TestLoginNamesBounded(t *testing.T) {
	s, _, _ := newStore(t)
	withRoot(t, s)
	before := heapInUse()
	for i := range 300 {
		name := strings.Repeat(string(rune('a'+i%26)), 1<<20-1) + fmt.Sprint(i%10)
		if _, _, err := s.Authenticate(name, "pw", fmt.Sprintf("10.0.%d.%d", i/256, i%256)); !errors.Is(err, auth.ErrInvalid) {
			t.Fatalf("Authenticate(a 1 MiB name) = %v, want ErrInvalid", err)
		}
	}
	for _, bad := range []struct{ name, password string }{{"", "pw"}, {"\xff", "pw"}, {"root", ""}, {"root", strings.Repeat("p", 73)}} {
		if _, _, err := s.Authenticate(bad.name, bad.password, "10.0.0.1"); !errors.Is(err, auth.ErrInvalid) {
			t.Errorf("Authenticate(%q, %d-byte password) = %v, want ErrInvalid", bad.name, len(bad.password), err)
		}
	}
	if n := auth.LimiterLen(s); n != 0 {
		t.Errorf("the limiter holds %d entries after invalid names only, want 0", n)
	}
	const distinct = 200
	for i := range distinct {
		name := fmt.Sprintf("%0256d", i)
		if _, _, err := s.Authenticate(name, "pw", fmt.Sprintf("10.1.%d.%d", i/256, i%256)); !errors.Is(err, auth.ErrBadCredentials) {
			t.Fatalf("Authenticate(unknown %d) = %v, want ErrBadCredentials", i, err)
		}
	}
	if n := auth.LimiterLen(s); n != 2*distinct {
		t.Errorf("the limiter holds %d entries after %d failures from as many addresses, want %d", n, distinct, 2*distinct)
	}
	if held := heapInUse() - before; held > 4<<20 {
		t.Errorf("the store holds %d more bytes after the logins, want at most 4 MiB", held)
	}
	runtime.KeepAlive(s)
}

// heapInUse returns the bytes of live heap objects after a collection.
func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
