package e2e

import (
	"net/http"
	"testing"

	"github.com/httpkv/httpkv/openapi/client"
)

// Status returns the server's status, read as root.
func (c AuthCaller) Status(tb testing.TB, s *Server) client.Status {
	tb.Helper()
	var st client.Status
	s.Do(tb, "GET", "/v1/status", nil, c.Header()...).Ok(tb, http.StatusOK, &st)
	return st
}
