package etcd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/httpkv/httpkv/auth"
	"github.com/httpkv/httpkv/internal/etcdtest"
	"github.com/httpkv/httpkv/kv"
)

func must(tb testing.TB, what string, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatalf("%s = %v", what, err)
	}
}

// eventually waits until cond holds, failing the test with what if it
// does not within recvTimeout.
func eventually(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	for deadline := time.Now().Add(recvTimeout); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			tb.Fatalf("%s: not within %v", what, recvTimeout)
		}
	}
}

// TestAuthAcrossGateways: users, roles and the enabled flag set through
// one gateway reach the others (their streams are told), a token issued
// by one is good on the others and on a gateway started later, and a
// password change through one ends the token everywhere. The records
// live under the namespace's auth/ prefix, out of the API's keys.
func TestAuthAcrossGateways(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	a, b := openGateway(t, c, "/auth/"), openGateway(t, c, "/auth/")
	changed := b.Auth().Changed()
	must(t, "AddUser(root)", a.Auth().AddUser(auth.RootUser, "rootpw"))
	must(t, "GrantRole(root, root)", a.Auth().GrantRole(auth.RootUser, auth.RootRole))
	must(t, "AddUser(alice)", a.Auth().AddUser("alice", "pw"))
	must(t, "SetEnabled(true)", a.Auth().SetEnabled(true))
	eventually(t, "auth enabled through a reaches b", b.Auth().Enabled)
	select {
	case <-changed:
	default:
		t.Error("b's Changed was not signalled")
	}

	tok, _, err := a.Auth().Authenticate("alice", "pw", "127.0.0.1")
	must(t, "Authenticate(alice) on a", err)
	if user, err := b.Auth().UserOf(tok); err != nil || user != "alice" {
		t.Fatalf("b.UserOf(a's token) = %q, %v; want alice", user, err)
	}
	late := openGateway(t, c, "/auth/")
	if user, err := late.Auth().UserOf(tok); err != nil || user != "alice" || !late.Auth().Enabled() {
		t.Fatalf("a gateway started later: UserOf(a's token) = %q, %v, enabled %v", user, err, late.Auth().Enabled())
	}

	must(t, "ChangePassword(alice) through b", b.Auth().ChangePassword("alice", "new"))
	eventually(t, "the password change through b ends the token on a", func() bool {
		_, err := a.Auth().UserOf(tok)
		return errors.Is(err, auth.ErrUnauthenticated)
	})

	res, err := a.Range(context.Background(), kv.RangeRequest{Key: []byte{0}, End: []byte{0}})
	if err != nil || len(res.KVs) != 0 {
		t.Errorf("the API's keys = %+v, %v; want none: auth's records are not among them", res, err)
	}
	raw, err := c.Client(t).Get(context.Background(), "/auth/auth/authUsers/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil || len(raw.Kvs) != 2 {
		t.Errorf("etcd holds %v users under /auth/auth/authUsers/ (%v), want 2", raw.Kvs, err)
	}
}

// TestAuthChangesCheckedAgainstOthers: a change through one gateway is
// checked against what the others did, even before its watch told it: a
// role deleted through a cannot be granted through b, and a user added
// through both at once is added once.
func TestAuthChangesCheckedAgainstOthers(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	a, b := openGateway(t, c, "/race/"), openGateway(t, c, "/race/")
	must(t, "AddRole(r)", a.Auth().AddRole("r"))
	must(t, "AddUser(u)", a.Auth().AddUser("u", "pw"))
	must(t, "DeleteRole(r) through a", a.Auth().DeleteRole("r"))
	if err := b.Auth().GrantRole("u", "r"); !errors.Is(err, auth.ErrRoleNotFound) {
		t.Fatalf("GrantRole(u, r) through b right after a deleted r = %v, want ErrRoleNotFound", err)
	}
	errs := make(chan error, 2)
	for _, g := range []*Backend{a, b} {
		go func() { errs <- g.Auth().AddUser("both", "pw") }()
	}
	var got []error
	for range 2 {
		got = append(got, <-errs)
	}
	if !slices.ContainsFunc(got, func(e error) bool { return e == nil }) || !slices.ContainsFunc(got, func(e error) bool { return errors.Is(e, auth.ErrUserExists) }) {
		t.Fatalf("AddUser(both) through both gateways at once = %v, want one nil and one ErrUserExists", got)
	}
}

// TestAuthTokensEndOnEveryGateway: a token issued through one gateway is
// good on the others, and what ends it through one ends it on all: a
// password change, auth turned off and on, and its user deleted and
// created again under the same name (by root: the new user is not the
// one the token was issued to, whatever its password and roles). Each
// change is known to every gateway once a token issued after it is good
// on each; the old token must then be refused on each.
func TestAuthTokensEndOnEveryGateway(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 1)
	gws := []*Backend{openGateway(t, c, "/tokens/"), openGateway(t, c, "/tokens/"), openGateway(t, c, "/tokens/")}
	a, b := gws[0], gws[1]
	must(t, "AddUser(root)", a.Auth().AddUser(auth.RootUser, "rootpw"))
	must(t, "GrantRole(root, root)", a.Auth().GrantRole(auth.RootUser, auth.RootRole))
	must(t, "AddUser(alice)", a.Auth().AddUser("alice", "pw"))
	must(t, "SetEnabled(true)", a.Auth().SetEnabled(true))

	login := func(g *Backend, name, password string) string {
		t.Helper()
		var tok string
		eventually(t, "a token for "+name, func() bool {
			var err error
			tok, _, err = g.Auth().Authenticate(name, password, "127.0.0.1")
			return err == nil
		})
		return tok
	}
	// good waits until every gateway takes tok as user's.
	good := func(what, tok, user string) {
		t.Helper()
		for i, g := range gws {
			eventually(t, fmt.Sprintf("%s: good on gateway %d", what, i), func() bool {
				u, err := g.Auth().UserOf(tok)
				return err == nil && u == user
			})
		}
	}
	refused := func(what, tok string) {
		t.Helper()
		for i, g := range gws {
			if u, err := g.Auth().UserOf(tok); !errors.Is(err, auth.ErrUnauthenticated) {
				t.Errorf("%s: gateway %d takes the old token as %q, %v; want ErrUnauthenticated", what, i, u, err)
			}
			if g.Auth().Unrestricted(tok) {
				t.Errorf("%s: gateway %d takes the old token as unrestricted", what, i)
			}
		}
	}

	old := login(a, "alice", "pw")
	good("issued through a", old, "alice")

	// root deletes alice and makes another alice, with a password and
	// roles of her own: the first alice's token is not hers.
	must(t, "DeleteUser(alice) through b", b.Auth().DeleteUser("alice"))
	must(t, "AddUser(alice) again through b", b.Auth().AddUser("alice", "newpw"))
	must(t, "GrantRole(alice, root)", b.Auth().GrantRole("alice", auth.RootRole))
	good("a token of the new alice", login(a, "alice", "newpw"), "alice")
	refused("after alice was deleted and created again", old)

	old = login(a, "alice", "newpw")
	must(t, "ChangePassword(alice) through b", b.Auth().ChangePassword("alice", "pw2"))
	good("a token after the password change", login(b, "alice", "pw2"), "alice")
	refused("after the password change", old)

	old = login(a, "alice", "pw2")
	must(t, "SetEnabled(false) through b", b.Auth().SetEnabled(false))
	must(t, "SetEnabled(true) through b", b.Auth().SetEnabled(true))
	good("a token after auth was turned off and on", login(a, "alice", "pw2"), "alice")
	refused("after auth was turned off and on", old)
}
