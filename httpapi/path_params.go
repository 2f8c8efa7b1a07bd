package httpapi

import (
	"net/http"
	"net/url"

	"github.com/go-chi/chi/v5"
)

// pathParam returns the path parameter key of r's route (a user's or a
// role's name, a stream's or a lease's ID) percent-decoded, as keys and
// the names of locks and elections are: x%2Fy is the one segment "x/y".
//
// The router matches the escaped path (r.URL.RawPath) when the request's
// path holds escapes Go would not write itself (%2F for a slash in a
// name, %3A as browsers write a colon) and then hands parameters over as
// they came; otherwise it matches the decoded path, and a parameter is
// decoded already. Go keeps RawPath only when it decodes, so the decode
// here cannot fail.
func pathParam(r *http.Request, key string) string {
	v := chi.URLParam(r, key)
	if r.URL.RawPath == "" {
		return v
	}
	if s, err := url.PathUnescape(v); err == nil {
		return s
	}
	return v
}
