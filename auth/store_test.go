package auth_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/auth"
)

func TestUsers(t *testing.T) {
	s, _, _ := newStore(t)
	mustDo(t, `AddUser("bob")`, s.AddUser("bob", "pw"))
	mustDo(t, `AddUser("alice")`, s.AddUser("alice", "pw"))
	mustDo(t, `AddRole("r")`, s.AddRole("r"))

	errs := []struct {
		name string
		err  error
		want error
	}{
		{"AddUser duplicate", s.AddUser("bob", "other"), auth.ErrUserExists},
		{"AddUser empty name", s.AddUser("", "pw"), auth.ErrInvalid},
		{"AddUser long name", s.AddUser(strings.Repeat("x", 257), "pw"), auth.ErrInvalid},
		{"AddUser invalid UTF-8", s.AddUser("\xff", "pw"), auth.ErrInvalid},
		{"AddUser dot", s.AddUser(".", "pw"), auth.ErrInvalid},
		{"AddUser dot dot", s.AddUser("..", "pw"), auth.ErrInvalid},
		{"AddUser empty password", s.AddUser("carol", ""), auth.ErrInvalid},
		{"AddUser long password", s.AddUser("carol", strings.Repeat("p", 73)), auth.ErrInvalid},
		{"DeleteUser unknown", s.DeleteUser("carol"), auth.ErrUserNotFound},
		{"ChangePassword unknown", s.ChangePassword("carol", "pw"), auth.ErrUserNotFound},
		{"ChangePassword empty", s.ChangePassword("bob", ""), auth.ErrInvalid},
		{"GrantRole unknown user", s.GrantRole("carol", "r"), auth.ErrUserNotFound},
		{"GrantRole unknown role", s.GrantRole("bob", "nope"), auth.ErrRoleNotFound},
		{"RevokeRole unknown user", s.RevokeRole("carol", "r"), auth.ErrUserNotFound},
		{"RevokeRole not held", s.RevokeRole("bob", "r"), auth.ErrRoleNotFound},
	}
	for _, e := range errs {
		if !errors.Is(e.err, e.want) {
			t.Errorf("%s = %v, want %v", e.name, e.err, e.want)
		}
	}
	if got := s.Users(); !slices.Equal(got, []string{"alice", "bob"}) {
		t.Errorf("Users() = %q, want [alice bob] (failed adds add nothing)", got)
	}

	mustDo(t, `GrantRole("bob", "r")`, s.GrantRole("bob", "r"))
	mustDo(t, `GrantRole("bob", "r") again`, s.GrantRole("bob", "r"))
	mustDo(t, `GrantRole("bob", "root")`, s.GrantRole("bob", auth.RootRole))
	u, err := s.GetUser("bob")
	if err != nil || !slices.Equal(u.Roles, []string{"r", "root"}) {
		t.Fatalf(`GetUser("bob") = (%+v, %v), want roles [r root] once each, sorted`, u, err)
	}
	// What GetUser returns is a copy.
	u.Roles[0] = "changed"
	if u, _ := s.GetUser("bob"); u.Roles[0] != "r" {
		t.Errorf("changing GetUser's roles changed the user: %q", u.Roles)
	}
	mustDo(t, `RevokeRole("bob", "root")`, s.RevokeRole("bob", auth.RootRole))
	if u, _ := s.GetUser("bob"); !slices.Equal(u.Roles, []string{"r"}) {
		t.Errorf(`GetUser("bob").Roles after RevokeRole = %q, want [r]`, u.Roles)
	}
	mustDo(t, `DeleteUser("alice")`, s.DeleteUser("alice"))
	if _, err := s.GetUser("alice"); !errors.Is(err, auth.ErrUserNotFound) {
		t.Errorf(`GetUser("alice") after DeleteUser = %v, want ErrUserNotFound`, err)
	}
}

func TestRootIsProtectedWhileEnabled(t *testing.T) {
	s, _, _ := newStore(t)
	if err := s.SetEnabled(true); !errors.Is(err, auth.ErrRootMissing) {
		t.Fatalf("SetEnabled(true) with no root user = %v, want ErrRootMissing", err)
	}
	mustDo(t, `AddUser("root")`, s.AddUser(auth.RootUser, "pw"))
	if err := s.SetEnabled(true); !errors.Is(err, auth.ErrRootMissing) {
		t.Fatalf("SetEnabled(true) with root lacking the root role = %v, want ErrRootMissing", err)
	}
	if s.Enabled() {
		t.Fatal("Enabled() = true after refused enables")
	}
	mustDo(t, `AddRole("root")`, s.AddRole(auth.RootRole))
	mustDo(t, `GrantRole("root", "root")`, s.GrantRole(auth.RootUser, auth.RootRole))
	mustDo(t, "SetEnabled(true)", s.SetEnabled(true))
	if !s.Enabled() {
		t.Fatal("Enabled() = false after SetEnabled(true)")
	}
	for name, err := range map[string]error{
		`DeleteUser("root")`:         s.DeleteUser(auth.RootUser),
		`RevokeRole("root", "root")`: s.RevokeRole(auth.RootUser, auth.RootRole),
		`DeleteRole("root")`:         s.DeleteRole(auth.RootRole),
	} {
		if !errors.Is(err, auth.ErrInvalid) {
			t.Errorf("%s while enabled = %v, want ErrInvalid", name, err)
		}
	}
	mustDo(t, "SetEnabled(false)", s.SetEnabled(false))
	mustDo(t, `RevokeRole("root", "root") while disabled`, s.RevokeRole(auth.RootUser, auth.RootRole))
	mustDo(t, `DeleteRole("root") while disabled`, s.DeleteRole(auth.RootRole))
	mustDo(t, `DeleteUser("root") while disabled`, s.DeleteUser(auth.RootUser))
}

func TestRoles(t *testing.T) {
	s, _, _ := newStore(t)
	mustDo(t, `AddRole("r")`, s.AddRole("r"))
	mustDo(t, `AddRole("q")`, s.AddRole("q"))
	mustDo(t, `AddUser("u")`, s.AddUser("u", "pw"))
	mustDo(t, `GrantRole("u", "r")`, s.GrantRole("u", "r"))
	mustDo(t, `GrantRole("u", "q")`, s.GrantRole("u", "q"))

	errs := []struct {
		name string
		err  error
		want error
	}{
		{"AddRole duplicate", s.AddRole("r"), auth.ErrRoleExists},
		{"AddRole empty name", s.AddRole(""), auth.ErrInvalid},
		{"AddRole dot dot", s.AddRole(".."), auth.ErrInvalid},
		{"DeleteRole unknown", s.DeleteRole("nope"), auth.ErrRoleNotFound},
		{"GrantPermission unknown role", s.GrantPermission("nope", auth.Permission{Key: []byte("a"), Access: auth.Read}), auth.ErrRoleNotFound},
		{"GrantPermission no key", s.GrantPermission("r", auth.Permission{Access: auth.Read}), auth.ErrInvalid},
		{"GrantPermission no access", s.GrantPermission("r", auth.Permission{Key: []byte("a")}), auth.ErrInvalid},
		{"GrantPermission bad access", s.GrantPermission("r", auth.Permission{Key: []byte("a"), Access: 4}), auth.ErrInvalid},
		{"RevokePermission unknown role", s.RevokePermission("nope", []byte("a"), nil), auth.ErrRoleNotFound},
		{"RevokePermission not held", s.RevokePermission("r", []byte("a"), nil), auth.ErrPermissionNotFound},
	}
	for _, e := range errs {
		if !errors.Is(e.err, e.want) {
			t.Errorf("%s = %v, want %v", e.name, e.err, e.want)
		}
	}

	mustDo(t, "GrantPermission(a, read)", s.GrantPermission("r", auth.Permission{Key: []byte("a"), Access: auth.Read}))
	mustDo(t, "GrantPermission([p, q), readwrite)", s.GrantPermission("r", auth.Permission{Key: []byte("p"), End: []byte("q"), Access: auth.ReadWrite}))
	// The same range again replaces the access instead of adding a second.
	mustDo(t, "GrantPermission(a, write)", s.GrantPermission("r", auth.Permission{Key: []byte("a"), Access: auth.Write}))
	r, err := s.GetRole("r")
	if err != nil || len(r.Permissions) != 2 {
		t.Fatalf(`GetRole("r") = (%+v, %v), want 2 permissions`, r, err)
	}
	if !s.Allowed("u", auth.Write, []byte("a"), nil) || s.Allowed("u", auth.Read, []byte("a"), nil) {
		t.Errorf("after granting a=write over a=read: Allowed(write a) = %v, Allowed(read a) = %v, want true, false",
			s.Allowed("u", auth.Write, []byte("a"), nil), s.Allowed("u", auth.Read, []byte("a"), nil))
	}
	// A revoke names the exact range: a key inside [p, q) is not it.
	if err := s.RevokePermission("r", []byte("p"), nil); !errors.Is(err, auth.ErrPermissionNotFound) {
		t.Errorf("RevokePermission(p) of [p, q) = %v, want ErrPermissionNotFound", err)
	}
	mustDo(t, "RevokePermission([p, q))", s.RevokePermission("r", []byte("p"), []byte("q")))
	if s.Allowed("u", auth.Read, []byte("p1"), nil) {
		t.Error("Allowed(read p1) = true after revoking [p, q)")
	}
	if _, err := s.GetRole("nope"); !errors.Is(err, auth.ErrRoleNotFound) {
		t.Errorf(`GetRole("nope") = %v, want ErrRoleNotFound`, err)
	}
	if got := s.Roles(); !slices.Equal(got, []string{"q", "r"}) {
		t.Errorf("Roles() = %q, want [q r]", got)
	}

	// Deleting a role takes it from its users.
	mustDo(t, `DeleteRole("r")`, s.DeleteRole("r"))
	if u, _ := s.GetUser("u"); !slices.Equal(u.Roles, []string{"q"}) {
		t.Errorf(`GetUser("u").Roles after DeleteRole("r") = %q, want [q]`, u.Roles)
	}
	if s.Allowed("u", auth.Write, []byte("a"), nil) {
		t.Error(`Allowed(write a) = true after DeleteRole("r")`)
	}
	// A role of the same name made again does not give back the old
	// role's users or permissions.
	mustDo(t, `AddRole("r") again`, s.AddRole("r"))
	if r, _ := s.GetRole("r"); len(r.Permissions) != 0 {
		t.Errorf(`GetRole("r") after re-adding = %+v, want no permissions`, r)
	}
}

func TestAllowed(t *testing.T) {
	s, _, _ := newStore(t)
	mustDo(t, `AddUser("u")`, s.AddUser("u", "pw"))
	mustDo(t, `AddUser("admin")`, s.AddUser("admin", "pw"))
	mustDo(t, `AddUser("nobody")`, s.AddUser("nobody", "pw"))
	mustDo(t, `GrantRole("admin", "root")`, s.GrantRole("admin", auth.RootRole))
	for _, role := range []string{"readers", "writers", "misc"} {
		mustDo(t, "AddRole("+role+")", s.AddRole(role))
		mustDo(t, "GrantRole(u, "+role+")", s.GrantRole("u", role))
	}
	grant := func(role, key, end string, a auth.Access) {
		t.Helper()
		p := auth.Permission{Key: []byte(key), Access: a}
		if end != "" {
			p.End = []byte(end)
		}
		mustDo(t, "GrantPermission", s.GrantPermission(role, p))
	}
	grant("readers", "app/", "app0", auth.Read) // prefix app/
	grant("writers", "app/w/", "app/w0", auth.Write)
	grant("writers", "k", "", auth.ReadWrite)
	grant("misc", "x/", "\x00", auth.Read) // from x/ on
	grant("misc", "m", "n", auth.Write)    // touches the next
	grant("misc", "n", "o", auth.Write)

	tests := []struct {
		user     string
		access   auth.Access
		key, end string
		want     bool
	}{
		{"u", auth.Read, "app/x", "", true},
		{"u", auth.Write, "app/x", "", false},
		{"u", auth.ReadWrite, "app/w/x", "", true}, // read from one role, write from another
		{"u", auth.ReadWrite, "app/x", "", false},
		{"u", auth.Read, "app/", "app0", true},
		{"u", auth.Read, "app/", "app1", false},
		{"u", auth.Read, "app/", "\x00", false},
		{"u", auth.Read, "ap", "app0", false},
		{"u", auth.ReadWrite, "k", "", true},
		{"u", auth.Read, "k", "k\x00", true},
		{"u", auth.Read, "k", "k\x00\x00", false},
		{"u", auth.Read, "kk", "", false},
		{"u", auth.Read, "x/", "\x00", true},
		{"u", auth.Read, "x", "\x00", false},
		{"u", auth.Read, "zzz", "", true},
		{"u", auth.Write, "m", "o", true}, // across touching permissions
		{"u", auth.Write, "m", "o\x00", false},
		{"u", auth.Read, "other", "", false},
		{"u", auth.Read, "\x00", "\x00", false},
		{"nobody", auth.Read, "app/x", "", false},
		{"ghost", auth.Read, "app/x", "", false},
		{"admin", auth.ReadWrite, "\x00", "\x00", true},
	}
	for _, tt := range tests {
		var end []byte
		if tt.end != "" {
			end = []byte(tt.end)
		}
		if got := s.Allowed(tt.user, tt.access, []byte(tt.key), end); got != tt.want {
			t.Errorf("Allowed(%q, %d, %q, %q) = %v, want %v", tt.user, tt.access, tt.key, tt.end, got, tt.want)
		}
	}
	if !s.IsRoot("admin") || s.IsRoot("u") || s.IsRoot("ghost") {
		t.Errorf("IsRoot(admin, u, ghost) = %v, %v, %v, want true, false, false", s.IsRoot("admin"), s.IsRoot("u"), s.IsRoot("ghost"))
	}

	// Every kind of change reaches the merged permissions at once.
	grant("readers", "other", "", auth.Read)
	if !s.Allowed("u", auth.Read, []byte("other"), nil) {
		t.Error("Allowed(read other) = false right after granting it")
	}
	mustDo(t, "RevokeRole(u, readers)", s.RevokeRole("u", "readers"))
	if s.Allowed("u", auth.Read, []byte("other"), nil) || s.Allowed("u", auth.Read, []byte("app/x"), nil) {
		t.Error("Allowed(read other or app/x) = true after revoking the role granting them")
	}
	mustDo(t, "DeleteUser(u)", s.DeleteUser("u"))
	mustDo(t, "AddUser(u) again", s.AddUser("u", "pw"))
	if s.Allowed("u", auth.Read, []byte("k"), nil) {
		t.Error("a user made again with a deleted user's name has its roles")
	}
}

func TestChanged(t *testing.T) {
	s, _, m := newStore(t)
	ch := s.Changed()
	if err := s.AddRole(""); err == nil {
		t.Fatal(`AddRole("") = nil, want an error`)
	}
	select {
	case <-ch:
		t.Fatal("Changed() closed by a refused change")
	default:
	}
	if m.writes != 0 {
		t.Fatalf("a refused change wrote %d times, want 0", m.writes)
	}
	mustDo(t, `AddRole("r")`, s.AddRole("r"))
	select {
	case <-ch:
	default:
		t.Fatal("Changed() not closed by AddRole")
	}
	if next := s.Changed(); next == ch {
		t.Fatal("Changed() after a change returned the closed channel")
	}
}
