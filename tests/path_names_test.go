package tests

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/openapi/client"
	"github.com/httpkv/httpkv/tests/e2e"
)

// namesWithReservedBytes are user, role, lock and election names a path
// can carry only escaped.
var namesWithReservedBytes = []string{"x/y", "/lead", "trail/", "a:b", "50%", "a b", "q?x", "h#1", "a+b", "ü/ñ", "%2F"}

// encodeURIComponent escapes s as JavaScript's encodeURIComponent does,
// as the console and browsers write a name into a path: every byte but
// A-Z a-z 0-9 - _ . ! ~ * ' ( ).
func encodeURIComponent(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-_.!~*'()", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// TestNamesInPathsDecoded: a user or a role whose name holds a slash, a
// colon, a percent sign, a space... is created by POST and then read,
// changed, granted, revoked and deleted through its name escaped in the
// path, whether escaped as Go does (url.PathEscape) or as browsers and
// the console do (encodeURIComponent): a path parameter is
// percent-decoded, x%2Fy is the name "x/y". Before, the parameter was
// used as it came when the path held such escapes, and GET and DELETE
// of /v1/auth/users/x%2Fy answered 404 user_not_found "x%2Fy". Locks and
// elections take such names too, and are released and resigned by them;
// watch streams and their watches are deleted by their IDs escaped.
func TestNamesInPathsDecoded(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t, e2e.AuthBcryptCost)
	none := e2e.AuthCaller{Name: "auth off"}
	// A stream's and a watch's IDs, which the server makes, are read the
	// same way: every byte of them escaped.
	stream, ids := s.CreateStream(t, `{"watches":[{"key":"a"}]}`)
	escaped := func(id string) string {
		var b strings.Builder
		for i := 0; i < len(id); i++ {
			fmt.Fprintf(&b, "%%%02X", id[i])
		}
		return b.String()
	}
	s.Do(t, "DELETE", fmt.Sprintf("/v1/watch/streams/%s/watches/%s", escaped(stream), escaped(fmt.Sprint(ids[0]))), nil).Want(t, http.StatusOK)
	s.Do(t, "DELETE", "/v1/watch/streams/"+escaped(stream), nil).Want(t, http.StatusOK)

	for i, name := range namesWithReservedBytes {
		for j, escape := range []func(string) string{url.PathEscape, encodeURIComponent} {
			t.Run(fmt.Sprintf("%q escaped %d", name, j), func(t *testing.T) {
				user, role := fmt.Sprintf("%s%d.%d", name, i, j), fmt.Sprintf("r%s%d.%d", name, i, j)
				u, r := "/v1/auth/users/"+escape(user), "/v1/auth/roles/"+escape(role)
				e2e.AuthDo(t, s, none, http.StatusCreated, "POST", "/v1/auth/users", fmt.Sprintf(`{"name":%q,"password":"pw"}`, user))
				e2e.AuthDo(t, s, none, http.StatusCreated, "POST", "/v1/auth/roles", fmt.Sprintf(`{"name":%q}`, role))
				e2e.AuthDo(t, s, none, http.StatusOK, "PUT", u+"/password", `{"password":"other"}`)
				e2e.AuthDo(t, s, none, http.StatusOK, "PUT", u+"/roles/"+escape(role), "")
				var got client.User
				e2e.AuthDo(t, s, none, http.StatusOK, "GET", u, "").Decode(t, &got)
				if got.Name != user || !slices.Equal(got.Roles, []string{role}) {
					t.Fatalf("GET %s = %+v, want user %q with role %q", u, got, user, role)
				}
				e2e.AuthDo(t, s, none, http.StatusOK, "POST", r+"/permissions", `{"key":"app/","prefix":true,"type":"read"}`)
				var gotRole client.Role
				e2e.AuthDo(t, s, none, http.StatusOK, "GET", r, "").Decode(t, &gotRole)
				if gotRole.Name != role || len(gotRole.Permissions) != 1 {
					t.Fatalf("GET %s = %+v, want role %q with one permission", r, gotRole, role)
				}
				e2e.AuthDo(t, s, none, http.StatusOK, "DELETE", r+"/permissions?key=app/&range_end=app0", "")
				e2e.AuthDo(t, s, none, http.StatusOK, "DELETE", u+"/roles/"+escape(role), "")
				e2e.AuthDo(t, s, none, http.StatusOK, "DELETE", u, "")
				e2e.AuthDo(t, s, none, http.StatusOK, "DELETE", r, "")
				s.Do(t, "GET", u, nil).WantError(t, http.StatusNotFound, "user_not_found")
				s.Do(t, "GET", r, nil).WantError(t, http.StatusNotFound, "role_not_found")
				var users client.UserList
				e2e.AuthDo(t, s, none, http.StatusOK, "GET", "/v1/auth/users", "").Decode(t, &users)
				if slices.Contains(users.Users, user) {
					t.Fatalf("GET /v1/auth/users = %q after deleting %q", users.Users, user)
				}

				var g client.LeaseResponse
				s.Do(t, "POST", "/v1/leases", []byte(`{"ttl":60}`)).Ok(t, http.StatusCreated, &g)
				lock := "/v1/locks/" + escape(user)
				var l client.LockResponse
				s.Do(t, "POST", lock+"?timeout=10s", fmt.Appendf(nil, `{"lease":%d}`, g.Id)).Ok(t, http.StatusOK, &l)
				if l.Key == nil || !strings.Contains(*l.Key, user+"/") {
					t.Fatalf("POST %s = key %v, want one under the lock %q", lock, l.Key, user)
				}
				s.Do(t, "DELETE", lock+"?key="+url.QueryEscape(*l.Key), nil).Want(t, http.StatusOK)

				election := "/v1/elections/" + escape(user)
				var c client.CampaignResponse
				s.Do(t, "POST", election+"/campaign?timeout=10s", fmt.Appendf(nil, `{"lease":%d,"value":"v"}`, g.Id)).Ok(t, http.StatusOK, &c)
				if c.Leader.Name == nil || *c.Leader.Name != user {
					t.Fatalf("POST %s/campaign = leader %+v, want the election %q", election, c.Leader, user)
				}
				s.Do(t, "GET", election+"/leader", nil).Want(t, http.StatusOK)
				leader, err := json.Marshal(map[string]any{"leader": c.Leader})
				if err != nil {
					t.Fatal(err)
				}
				s.Do(t, "POST", election+"/resign", leader).Want(t, http.StatusOK)
				s.Do(t, "GET", election+"/leader", nil).WantError(t, http.StatusNotFound, "no_leader")
			})
		}
	}
}
