package docs

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/httpkv/httpkv/openapi"
	"github.com/httpkv/httpkv/tests/e2e"
)

// TestOpenAPIDocumentServed: /openapi.json is the OpenAPI 3.0 document
// and /swagger.json the Swagger 2.0 one, as embedded; the service
// endpoints answer as the document says (CheckReply checks each).
func TestOpenAPIDocumentServed(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t)
	r := s.Do(t, "GET", "/openapi.json", nil).Want(t, http.StatusOK)
	if string(r.Body) != openapi.V3() {
		t.Errorf("GET /openapi.json is not the OpenAPI 3 document of package openapi")
	}
	var v3 struct {
		OpenAPI string `json:"openapi"`
	}
	if err := json.Unmarshal(r.Body, &v3); err != nil || !strings.HasPrefix(v3.OpenAPI, "3.0.") {
		t.Errorf("GET /openapi.json: openapi %q (%v), want 3.0.x", v3.OpenAPI, err)
	}
	r = s.Do(t, "GET", "/swagger.json", nil).Want(t, http.StatusOK)
	if string(r.Body) != openapi.V2() {
		t.Errorf("GET /swagger.json is not the Swagger 2.0 document of package openapi")
	}
	s.Do(t, "GET", "/metrics", nil).Want(t, http.StatusOK)
	s.Do(t, "GET", "/", nil).Want(t, http.StatusOK)
	s.Do(t, "GET", "/v1/nowhere", nil).WantError(t, http.StatusNotFound, "not_found")
	s.Do(t, "POST", "/v1/status", nil).WantError(t, http.StatusMethodNotAllowed, "method_not_allowed")
}

// TestOpenAPIAuthAdministration sends the auth administration calls with
// their errors, while auth is off (so every call is allowed): each answer
// must be one the document lists.
func TestOpenAPIAuthAdministration(t *testing.T) {
	t.Parallel()
	s := e2e.StartServer(t, "--bcrypt-cost=4")
	steps := []struct {
		method, path, body string
		status             int
		code               string
	}{
		{"POST", "/v1/auth/enable", "", http.StatusBadRequest, "invalid_argument"},
		{"POST", "/v1/auth/users", `{"name":"u","password":"p"}`, http.StatusCreated, ""},
		{"POST", "/v1/auth/users", `{"name":"u","password":"p"}`, http.StatusConflict, "already_exists"},
		{"POST", "/v1/auth/users", `{"name":"v"`, http.StatusBadRequest, "invalid_argument"},
		{"PUT", "/v1/auth/users/nobody/password", `{"password":"p"}`, http.StatusNotFound, "user_not_found"},
		{"PUT", "/v1/auth/users/u/password", `{"password":"q"}`, http.StatusOK, ""},
		{"POST", "/v1/auth/roles", `{"name":"r"}`, http.StatusCreated, ""},
		{"POST", "/v1/auth/roles", `{"name":"r"}`, http.StatusConflict, "already_exists"},
		{"GET", "/v1/auth/roles/nobody", "", http.StatusNotFound, "role_not_found"},
		{"PUT", "/v1/auth/users/u/roles/nobody", "", http.StatusNotFound, "role_not_found"},
		{"PUT", "/v1/auth/users/nobody/roles/r", "", http.StatusNotFound, "user_not_found"},
		{"PUT", "/v1/auth/users/u/roles/r", "", http.StatusOK, ""},
		{"POST", "/v1/auth/roles/r/permissions", `{"key":"a/","prefix":true,"type":"read"}`, http.StatusOK, ""},
		{"POST", "/v1/auth/roles/r/permissions", `{"key":"\u0000\u00ff","from_key":true,"type":"write"}`, http.StatusOK, ""},
		{"POST", "/v1/auth/roles/r/permissions", `{"key":"a","type":"all"}`, http.StatusBadRequest, "invalid_argument"},
		{"POST", "/v1/auth/roles/nobody/permissions", `{"key":"a","type":"read"}`, http.StatusNotFound, "role_not_found"},
		{"GET", "/v1/auth/roles/r", "", http.StatusOK, ""},
		{"GET", "/v1/auth/users/u", "", http.StatusOK, ""},
		{"DELETE", "/v1/auth/roles/r/permissions?key=b", "", http.StatusNotFound, "permission_not_found"},
		{"DELETE", "/v1/auth/roles/r/permissions", "", http.StatusBadRequest, "invalid_argument"},
		{"DELETE", "/v1/auth/roles/r/permissions?key=a/&prefix=true", "", http.StatusOK, ""},
		{"DELETE", "/v1/auth/users/u/roles/r", "", http.StatusOK, ""},
		{"DELETE", "/v1/auth/roles/r", "", http.StatusOK, ""},
		{"DELETE", "/v1/auth/roles/r", "", http.StatusNotFound, "role_not_found"},
		{"DELETE", "/v1/auth/users/u", "", http.StatusOK, ""},
		{"DELETE", "/v1/auth/users/u", "", http.StatusNotFound, "user_not_found"},
		{"POST", "/v1/auth/token", `{"name":"u","password":"q"}`, http.StatusBadRequest, "invalid_argument"},
		{"POST", "/v1/auth/disable", "", http.StatusOK, ""},
		{"GET", "/v1/auth/status", "", http.StatusOK, ""},
	}
	for _, st := range steps {
		var body []byte
		if st.body != "" {
			body = []byte(st.body)
		}
		r := s.Do(t, st.method, st.path, body, "Content-Type", "application/json")
		if st.code != "" {
			r.WantError(t, st.status, st.code)
		} else {
			r.Want(t, st.status)
		}
	}
}
