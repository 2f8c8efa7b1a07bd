package httpapi

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/httpkv/httpkv/wire"
)

// newQuery reads r's query string, which may hold the accepted
// parameters only (and access_token, on the streams that take it), each
// at most once.
func newQuery(r *http.Request, accepted wire.Params) *wire.Query {
	v := r.URL.Query()
	q := wire.NewQuery(v, accepted)
	q.Fail(strictQuery(r, v, accepted))
	return q
}

// strictQuery refuses a parameter the route does not accept
// (unknownParam), then one given twice (repeatedParam).
func strictQuery(r *http.Request, v url.Values, accepted wire.Params) error {
	if aerr := unknownParam(r, v, accepted); aerr != nil {
		return aerr
	}
	if aerr := repeatedParam(v); aerr != nil {
		return aerr
	}
	return nil
}

// unknownParam refuses the first parameter of v (in name order) that the
// route does not accept, naming it, the nearest accepted name, and every
// accepted one. access_token is accepted where a token may come in the
// query (queryTokenAllowed); elsewhere authentication refuses it first.
func unknownParam(r *http.Request, v url.Values, accepted wire.Params) *apiError {
	var unknown []string
	for name := range v {
		if !slices.Contains(accepted, name) && (name != "access_token" || !queryTokenAllowed(r)) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	name := unknown[0]
	route := r.Method + " " + routePattern(r)
	if hint := keyPathHint(r, name); hint != "" {
		return badRequest("%s reads one key and takes no %q: %s", route, name, hint)
	}
	if len(accepted) == 0 {
		return badRequest("unknown query parameter %q: %s takes no query parameters", name, route)
	}
	return badRequest("unknown query parameter %q%s: %s takes %s", name, wire.DidYouMean(name, accepted), route, strings.Join(accepted, ", "))
}

// repeatedParam refuses a parameter given more than once (in name
// order): url.Values.Get reads the first and drops the rest, so
// DELETE /v1/kv?key=zz&key=a deleted zz and said nothing of a.
func repeatedParam(v url.Values) *apiError {
	var repeated []string
	for name, values := range v {
		if len(values) > 1 {
			repeated = append(repeated, name)
		}
	}
	if len(repeated) == 0 {
		return nil
	}
	slices.Sort(repeated)
	return badRequest("query parameter %q is given more than once: give it once", repeated[0])
}

// routePattern is r's route as the API documents it: /v1/kv/{key}, not
// chi's /v1/kv/*.
func routePattern(r *http.Request) string {
	rc := chi.RouteContext(r.Context())
	if rc == nil || rc.RoutePattern() == "" {
		return r.URL.Path
	}
	p := rc.RoutePattern()
	if strings.HasSuffix(p, "/kv/*") {
		p = strings.TrimSuffix(p, "*") + "{key}"
	}
	return p
}

// keyPathHint points a range selector given to /v1/kv/{key} at the
// range endpoint that takes it: GET /v1/kv/app/?prefix=true reads the
// key "app/" alone, which is not what its author meant.
func keyPathHint(r *http.Request, name string) string {
	switch name {
	case "prefix", "range_end", "from_key", "range_end_base64":
	default:
		return ""
	}
	key, aerr := pathKey(r)
	if aerr != nil || r.Method != http.MethodGet && r.Method != http.MethodDelete {
		return ""
	}
	q := url.Values{"key": {string(key)}}
	q.Set(name, r.URL.Query().Get(name))
	return "to " + map[string]string{http.MethodGet: "read", http.MethodDelete: "delete"}[r.Method] +
		" a range, use " + r.Method + " /v1/kv?" + q.Encode()
}

// noQuery refuses every query parameter, for the routes that take none.
func (h *Handler) noQuery(next http.Handler) http.Handler { return h.onlyQuery(nil)(next) }

// onlyQuery refuses every query parameter but the accepted ones, for the
// routes whose handlers read their few parameters themselves.
func (h *Handler) onlyQuery(accepted wire.Params) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if err := strictQuery(r, r.URL.Query(), accepted); err != nil {
				h.writeError(w, r, err)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}
