package admin

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// startAuthServer starts a server with auth on: root (password root-pw)
// with the root role, and alice (alice-pw) with the role reader, which may
// read the keys under app/.
func startAuthServer(t *testing.T, extraArgs ...string) *e2e.Server {
	t.Helper()
	s := e2e.StartServer(t, append([]string{e2e.AuthBcryptCost}, extraArgs...)...)
	none := e2e.AuthCaller{}
	e2e.AuthDo(t, s, none, http.StatusCreated, "POST", "/v1/auth/users", `{"name":"root","password":"root-pw"}`)
	e2e.AuthDo(t, s, none, http.StatusCreated, "POST", "/v1/auth/users", `{"name":"alice","password":"alice-pw"}`)
	e2e.AuthDo(t, s, none, http.StatusCreated, "POST", "/v1/auth/roles", `{"name":"reader"}`)
	e2e.AuthDo(t, s, none, http.StatusOK, "POST", "/v1/auth/roles/reader/permissions", `{"key":"app/","prefix":true,"type":"read"}`)
	e2e.AuthDo(t, s, none, http.StatusOK, "PUT", "/v1/auth/users/root/roles/root", "")
	e2e.AuthDo(t, s, none, http.StatusOK, "PUT", "/v1/auth/users/alice/roles/reader", "")
	s.Put(t, "app/x", "hello")
	s.Put(t, "etc/secret", "not for alice")
	e2e.AuthDo(t, s, none, http.StatusOK, "POST", "/v1/auth/enable", "")
	return s
}

// asRoot returns a caller holding a fresh root token.
func asRoot(t *testing.T, s *e2e.Server) e2e.AuthCaller {
	t.Helper()
	return e2e.AuthCaller{Name: "root", Token: e2e.AuthLogin(t, s, "root", "root-pw")}
}

// TestConsoleLoginReadOnly signs in as a user who may only read app/: the
// page shows no edit controls, a 403 says which permission is missing,
// live updates come through the token in the stream's URL, the token is
// renewed before it expires and after a server restart forgot it, and
// signing out forgets it.
func TestConsoleLoginReadOnly(t *testing.T) {
	t.Parallel()
	s := startAuthServer(t, "--auth-token-ttl=6s")

	p := e2e.OpenConsole(t, s, "#/keys", 1280, 800)
	p.WaitText(".login h2", "Sign in")
	if n := p.Count("#sections a"); n != 0 {
		t.Errorf("signed out, the page shows %d section links, want none", n)
	}
	p.MarkLabels()
	p.FillLabelled("Name", "alice")
	p.FillLabelled("Password", "wrong")
	p.Click(".login button", "Sign in")
	p.WaitText(".login .problem", "Wrong name or password.")
	p.FillLabelled("Password", "alice-pw")
	p.Click(".login button", "Sign in")
	p.WaitText("#who", "Signed in as alice")

	// The top level needs read on every key: the page says so.
	p.WaitText(".browse .problem", "Permission denied: to list the top level you need read permission on every key")
	if n := p.Count("#sections a"); n != 3 {
		t.Errorf("alice sees %d section links, want 3 (Keys, Leases, Locks and elections: the others need root)", n)
	}

	// Her folder: readable, with nothing to change it.
	p.GoTo("#/keys?f=app/&k=app/x")
	p.WaitText(".key-pane .value", "hello")
	p.WaitText(".browse .toolbar", "Deleted keys")
	for _, control := range []string{"Edit", "Delete…", "New key", "Create this key", "Delete folder…", "Restore"} {
		var n int
		p.Eval(`[...document.querySelectorAll("main button, main a.button")].filter((b) => b.textContent.trim() === `+e2e.Js(control)+`).length`, &n)
		if n != 0 {
			t.Errorf("alice, who may not write, sees %d %q controls", n, control)
		}
	}
	// Live, with the token in the stream's URL.
	e2e.AuthDo(t, s, asRoot(t, s), http.StatusOK, "PUT", e2e.KeyPath("app/x"), "changed by root")
	p.WaitText(".key-pane .value", "changed by root")
	e2e.AuthDo(t, s, asRoot(t, s), http.StatusOK, "PUT", e2e.KeyPath("app/y"), "new")
	p.WaitText(".children a.key", "y")

	// Root's sections answer with what is missing.
	p.GoTo("#/cluster")
	p.WaitText("main .problem", "Permission denied: the Cluster section needs the root role")

	// The token (6 s) is renewed before it expires, and the page goes on.
	var first struct {
		Token     string  `json:"token"`
		ExpiresAt float64 `json:"expiresAt"`
	}
	p.Eval(`JSON.parse(sessionStorage.getItem("httpkv.session"))`, &first)
	if first.Token == "" {
		t.Fatalf("no token in sessionStorage after signing in")
	}
	p.Wait("a renewed token", `JSON.parse(sessionStorage.getItem("httpkv.session")).token !== `+e2e.Js(first.Token))
	p.Wait("the first token's expiry", `Date.now() > `+jsNumber(first.ExpiresAt))
	p.GoTo("#/keys?f=app/&k=app/y")
	p.WaitText(".key-pane .value", "new")
	p.WaitText("#who", "Signed in as alice")

	// Tokens do not survive a server restart: the page gets a new one with
	// the password it holds, and its stream resumes with it.
	s.Restart()
	e2e.AuthDo(t, s, asRoot(t, s), http.StatusOK, "PUT", e2e.KeyPath("app/y"), "after the restart")
	p.WaitText(".key-pane .value", "after the restart")
	p.Wait("the live indicator to say live", `document.getElementById("live").dataset.state === "live"`)
	p.WaitText("#who", "Signed in as alice")

	p.Click("#who button", "Sign out")
	p.WaitText(".login h2", "Sign in")
	var stored *string
	p.Eval(`sessionStorage.getItem("httpkv.session")`, &stored)
	if stored != nil {
		t.Errorf("after signing out sessionStorage holds %q, want nothing", *stored)
	}
}

func jsNumber(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}

// TestConsoleAdminRole has root create a role, grant it a permission on a
// prefix, give it to a new user, then revoke the permission and delete
// the role, checking each step on the page and in the API.
func TestConsoleAdminRole(t *testing.T) {
	t.Parallel()
	s := startAuthServer(t)

	p := e2e.OpenConsole(t, s, "#/access", 1280, 800)
	p.SignIn("root", "root-pw")
	p.WaitText("#who", "Signed in as root (root)")
	p.WaitText(".access h2", "Users and roles")
	p.WaitText(".auth-state", "Auth is on")
	p.WaitText(".roles .picks", "reader")

	p.MarkLabels()
	p.FillLabelled("New role", "ops")
	p.Click(".roles form button", "Add role")
	p.WaitText("#notice", "Added the role ops.")
	p.WaitText(".roles .detail h4", "Role ops")
	p.WaitText(".roles .detail", "No permissions.")

	p.MarkLabels()
	p.FillLabelled("Key", "ops/")
	p.FillLabelled("Which keys", "prefix")
	p.FillLabelled("Access", "readwrite")
	p.Click(".grant-perm button", "Grant permission")
	p.WaitText(".roles table.perms td", "every key under ops/")
	p.WaitText(".roles table.perms td", "readwrite")
	root := asRoot(t, s)
	var role client.Role
	e2e.AuthDo(t, s, root, http.StatusOK, "GET", "/v1/auth/roles/ops", "").Decode(t, &role)
	if len(role.Permissions) != 1 || e2e.Deref(role.Permissions[0].Key) != "ops/" || e2e.Deref(role.Permissions[0].RangeEnd) != "ops0" || role.Permissions[0].Type != "readwrite" {
		t.Errorf("role ops has permissions %+v, want readwrite on [ops/, ops0)", role.Permissions)
	}

	// A new user with the role.
	p.MarkLabels()
	p.FillLabelled("New user", "bob")
	p.FillLabelled("Password", "bob-pw")
	p.Click(".users form button", "Add user")
	p.WaitText(".users .detail h4", "User bob")
	p.MarkLabels()
	p.FillLabelled("Role", "ops")
	p.Click(".users .detail button", "Grant role")
	p.WaitText(`.users .detail ul[aria-label="Roles of bob"]`, "ops")
	var bob client.User
	e2e.AuthDo(t, s, root, http.StatusOK, "GET", "/v1/auth/users/bob", "").Decode(t, &bob)
	if len(bob.Roles) != 1 || bob.Roles[0] != "ops" {
		t.Errorf("bob has roles %q, want [ops]", bob.Roles)
	}
	// bob may now write under ops/.
	e2e.AuthDo(t, s, e2e.AuthCaller{Name: "bob", Token: e2e.AuthLogin(t, s, "bob", "bob-pw")}, http.StatusOK, "PUT", e2e.KeyPath("ops/a"), "by bob")

	// Revoke the permission, then delete the role.
	p.Click(".roles table.perms button", "Revoke")
	p.WaitText(".roles .detail", "No permissions.")
	e2e.AuthDo(t, s, root, http.StatusOK, "GET", "/v1/auth/roles/ops", "").Decode(t, &role)
	if len(role.Permissions) != 0 {
		t.Errorf("after the revoke role ops has permissions %+v, want none", role.Permissions)
	}
	p.Click(".roles .detail button", "Delete role")
	p.Confirm("Delete role")
	p.WaitText("#notice", "Deleted the role ops.")
	p.WaitNoText(".roles .picks", "ops")
	e2e.AuthDo(t, s, root, http.StatusNotFound, "GET", "/v1/auth/roles/ops", "")
}
