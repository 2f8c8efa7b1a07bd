package auth_test

import (
	"errors"
	"testing"

	"github.com/httpkv/httpkv/auth"
	"github.com/httpkv/httpkv/keyrange"
)

// TestAuthorize drives the policy on key ranges: disabled auth allows
// everything; a bad token is unauthenticated; admin needs root; ranges
// must be covered in full for the kind of access asked.
func TestAuthorize(t *testing.T) {
	s, _, _ := newStore(t)
	if err := s.Authorize("", auth.Need{Admin: true}); err != nil {
		t.Fatalf("Authorize(no token, admin) with auth disabled = %v, want nil", err)
	}
	withRoot(t, s)
	mustDo(t, "AddUser(alice)", s.AddUser("alice", "pw"))
	mustDo(t, "AddRole(app)", s.AddRole("app"))
	mustDo(t, "GrantPermission(app/ rw)", s.GrantPermission("app", auth.Permission{Key: []byte("app/"), End: keyrange.PrefixEnd([]byte("app/")), Access: auth.ReadWrite}))
	mustDo(t, "GrantPermission(cfg r)", s.GrantPermission("app", auth.Permission{Key: []byte("cfg"), Access: auth.Read}))
	mustDo(t, "GrantRole(alice, app)", s.GrantRole("alice", "app"))
	alice, root := login(t, s, "alice", "pw"), login(t, s, auth.RootUser, "rootpw")

	prefix, cfg, other := keyrange.Prefix([]byte("app/")), keyrange.Single([]byte("cfg")), keyrange.Prefix([]byte("ap"))
	for _, tc := range []struct {
		name  string
		token string
		need  auth.Need
		want  error
	}{
		{"no token", "", auth.Need{}, auth.ErrUnauthenticated},
		{"bad token", "nope", auth.Need{Read: []keyrange.Range{cfg}}, auth.ErrUnauthenticated},
		{"nothing", alice, auth.Need{}, nil},
		{"read covered", alice, auth.Need{Read: []keyrange.Range{prefix, cfg}}, nil},
		{"write covered", alice, auth.Need{Write: []keyrange.Range{keyrange.Single([]byte("app/x"))}}, nil},
		{"write on read-only", alice, auth.Need{Write: []keyrange.Range{cfg}}, auth.ErrPermissionDenied},
		{"read overlapping only", alice, auth.Need{Read: []keyrange.Range{other}}, auth.ErrPermissionDenied},
		{"admin", alice, auth.Need{Admin: true}, auth.ErrPermissionDenied},
		{"root admin", root, auth.Need{Admin: true, Write: []keyrange.Range{keyrange.All()}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := s.Authorize(tc.token, tc.need); !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Errorf("Authorize(%s, %+v) = %v, want %v", tc.name, tc.need, err, tc.want)
			}
		})
	}
	if s.Unrestricted(alice) || !s.Unrestricted(root) {
		t.Errorf("Unrestricted(alice, root) = %v, %v; want false, true", s.Unrestricted(alice), s.Unrestricted(root))
	}
}

// TestRecheck: a stream's caller is decided again as things change, and
// the error says why it no longer may.
func TestRecheck(t *testing.T) {
	s, clk, _ := newStore(t)
	open, err := s.Identify("")
	if err != nil || open != (auth.Caller{}) {
		t.Fatalf("Identify(no token) with auth disabled = %+v, %v; want no one", open, err)
	}
	withRoot(t, s)
	if err := s.Recheck(open, auth.Need{}); !errors.Is(err, auth.ErrAuthEnabled) {
		t.Errorf("Recheck(tokenless caller) after enable = %v, want ErrAuthEnabled", err)
	}
	mustDo(t, "AddUser(bob)", s.AddUser("bob", "pw"))
	mustDo(t, "AddRole(r)", s.AddRole("r"))
	mustDo(t, "GrantPermission(k)", s.GrantPermission("r", auth.Permission{Key: []byte("k"), Access: auth.Read}))
	mustDo(t, "GrantRole(bob, r)", s.GrantRole("bob", "r"))
	need := auth.Need{Read: []keyrange.Range{keyrange.Single([]byte("k"))}}
	caller := func() auth.Caller {
		t.Helper()
		c, err := s.Identify(login(t, s, "bob", "pw"))
		if err != nil || c.User != "bob" || c.Expires != clk.Now().Add(testTTL) {
			t.Fatalf("Identify(bob's token) = %+v, %v; want bob expiring in %v", c, err, testTTL)
		}
		return c
	}
	c := caller()
	mustDo(t, "Recheck(bob)", s.Recheck(c, need))
	mustDo(t, "RevokePermission(k)", s.RevokePermission("r", []byte("k"), nil))
	if err := s.Recheck(c, need); !errors.Is(err, auth.ErrPermissionDenied) {
		t.Errorf("Recheck after the permission is revoked = %v, want ErrPermissionDenied", err)
	}
	mustDo(t, "ChangePassword(bob)", s.ChangePassword("bob", "pw2"))
	if err := s.Recheck(c, auth.Need{}); !errors.Is(err, auth.ErrTokenRevoked) {
		t.Errorf("Recheck after a password change = %v, want ErrTokenRevoked", err)
	}
	mustDo(t, "ChangePassword(bob)", s.ChangePassword("bob", "pw"))
	c = caller()
	clk.Advance(testTTL)
	if err := s.Recheck(c, auth.Need{}); !errors.Is(err, auth.ErrTokenExpired) {
		t.Errorf("Recheck past the token's time = %v, want ErrTokenExpired", err)
	}
	mustDo(t, "DeleteUser(bob)", s.DeleteUser("bob"))
	if err := s.Recheck(c, auth.Need{}); !errors.Is(err, auth.ErrUserDeleted) {
		t.Errorf("Recheck after the user is deleted = %v, want ErrUserDeleted", err)
	}
	mustDo(t, "SetEnabled(false)", s.SetEnabled(false))
	if err := s.Recheck(c, auth.Need{}); !errors.Is(err, auth.ErrAuthDisabled) {
		t.Errorf("Recheck of a token caller after disable = %v, want ErrAuthDisabled", err)
	}
}

// TestAccessNames: the names the API gives the kinds of access read back.
func TestAccessNames(t *testing.T) {
	for _, a := range []auth.Access{auth.Read, auth.Write, auth.ReadWrite} {
		if got, ok := auth.ParseAccess(a.String()); !ok || got != a {
			t.Errorf("ParseAccess(%q) = %v, %v; want %v", a.String(), got, ok, a)
		}
	}
	if _, ok := auth.ParseAccess("all"); ok {
		t.Error(`ParseAccess("all") succeeded, want no such access`)
	}
}
