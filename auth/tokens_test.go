package auth_test

import (
	"errors"
	"fmt"
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
	for _, c := range []struct{ name, password string }{
		{"u", "wrong"},
		{"u", ""},
		{"nobody", "secret"},
		{"", ""},
	} {
		if tok, _, err := s.Authenticate(c.name, c.password, "a"); !errors.Is(err, auth.ErrBadCredentials) || tok != "" {
			t.Errorf("Authenticate(%q, %q) = (%q, %v), want ErrBadCredentials", c.name, c.password, tok, err)
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
	t.Run("per user", func(t *testing.T) {
		s, c, _ := newStore(t)
		withRoot(t, s)
		mustDo(t, "AddUser", s.AddUser("u", "pw"))
		for i := range 5 {
			if _, _, err := s.Authenticate("u", "wrong", fmt.Sprintf("addr%d", i)); !errors.Is(err, auth.ErrBadCredentials) {
				t.Fatalf("failure %d: Authenticate = %v, want ErrBadCredentials", i+1, err)
			}
		}
		// Even the right password from a fresh address is refused now.
		if _, _, err := s.Authenticate("u", "pw", "fresh"); !errors.Is(err, auth.ErrTooManyAttempts) {
			t.Fatalf("Authenticate after 5 failures = %v, want ErrTooManyAttempts", err)
		}
		// Other users are not affected, from the same addresses.
		mustDo(t, "AddUser", s.AddUser("v", "pw"))
		if _, _, err := s.Authenticate("v", "pw", "fresh"); err != nil {
			t.Fatalf("Authenticate(v) = %v, want a token", err)
		}
		c.Advance(2 * time.Second)
		tok, _, err := s.Authenticate("u", "pw", "fresh")
		if err != nil {
			t.Fatalf("Authenticate 2s later = %v, want a token", err)
		}
		wantUser(t, s, tok, "u")
	})
	t.Run("per address", func(t *testing.T) {
		s, c, _ := newStore(t)
		withRoot(t, s)
		for i := range 5 {
			if _, _, err := s.Authenticate(fmt.Sprintf("nobody%d", i), "x", "10.0.0.1"); !errors.Is(err, auth.ErrBadCredentials) {
				t.Fatalf("failure %d: Authenticate = %v, want ErrBadCredentials", i+1, err)
			}
		}
		if _, _, err := s.Authenticate("root", "rootpw", "10.0.0.1"); !errors.Is(err, auth.ErrTooManyAttempts) {
			t.Fatalf("Authenticate from the address after 5 failures = %v, want ErrTooManyAttempts", err)
		}
		if _, _, err := s.Authenticate("root", "rootpw", "10.0.0.2"); err != nil {
			t.Fatalf("Authenticate from another address = %v, want a token", err)
		}
		c.Advance(2 * time.Second)
		if _, _, err := s.Authenticate("root", "rootpw", "10.0.0.1"); err != nil {
			t.Fatalf("Authenticate from the address 2s later = %v, want a token", err)
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
		// at most the burst of 5 attempts may reach the password check,
		// however many run at once.
		s, _, _ := newStore(t)
		withRoot(t, s)
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			bad, far int
		)
		for i := range 64 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _, err := s.Authenticate("root", "wrong", fmt.Sprintf("addr%d", i))
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
