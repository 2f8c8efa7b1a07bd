package httpapi

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/rs/zerolog"
	"golang.org/x/crypto/bcrypt"

	"github.com/httpkv/httpkv/auth"
	"github.com/httpkv/httpkv/backend/embedded"
	"github.com/httpkv/httpkv/internal/storetest"

	"github.com/httpkv/httpkv/wire"
)

// TestPathParamsDecoded: a name in a path is percent-decoded, however it
// was escaped: x%2Fy is the user "x/y", a%3Ab (as browsers write it) the
// user "a:b"; x%252Fy is the user "x%2Fy", which does not exist.
func TestPathParamsDecoded(t *testing.T) {
	b := storetest.Open(t, embedded.Options{Auth: auth.Config{BcryptCost: bcrypt.MinCost}})
	h := NewHandler(b, b.Auth(), zerolog.Nop(), Config{})
	for _, name := range []string{"x/y", "a:b"} {
		body, _ := json.Marshal(map[string]string{"name": name, "password": "pw"})
		mustServe(t, h, http.StatusCreated, "POST", "/v1/auth/users", string(body))
	}
	for _, tc := range []struct {
		path, want string
	}{
		{"/v1/auth/users/x%2Fy", "x/y"},
		{"/v1/auth/users/x%2fy", "x/y"},
		{"/v1/auth/users/a%3Ab", "a:b"},
		{"/v1/auth/users/a:b", "a:b"},
		{"/v1/auth/users/%61%3A%62", "a:b"},
	} {
		var u wire.User
		if err := json.Unmarshal(mustServe(t, h, http.StatusOK, "GET", tc.path, "").Body.Bytes(), &u); err != nil || u.Name != tc.want {
			t.Errorf("GET %s = %+v (%v), want the user %q", tc.path, u, err, tc.want)
		}
	}
	if rec := serve(t, h, "GET", "/v1/auth/users/x%252Fy", ""); rec.Code != http.StatusNotFound || errorCode(t, rec) != "user_not_found" {
		t.Errorf("GET /v1/auth/users/x%%252Fy = %d %s, want 404 user_not_found: the user is x%%2Fy", rec.Code, rec.Body)
	}
	mustServe(t, h, http.StatusOK, "DELETE", "/v1/auth/users/x%2Fy", "")
	mustServe(t, h, http.StatusNotFound, "GET", "/v1/auth/users/x%2Fy", "")
}
