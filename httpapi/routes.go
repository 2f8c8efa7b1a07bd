package httpapi

import (
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/cors"

	"github.com/httpkv/httpkv/web"
)

// routes lays out every route of the API in one place.
//
// Every request gets an id, a log line, metrics and panic recovery
// before it is routed (ServeHTTP).
// Requests that are not streams also get read and write deadlines
// (deadlines), and the bytes of large answers being sent are bounded; streams set a deadline on each of their sends instead.
// Under /v1, a malformed query string is refused first, then a request
// without valid credentials (before its body is read: only the token
// and auth status endpoints need none), then a body over the limits.
// Every route takes only the query parameters it declares (newQuery in
// its handler, or noQuery here for none).
func (h *Handler) routes() chi.Router {
	r := chi.NewRouter()
	if len(h.cfg.CORSAllowedOrigins) > 0 {
		r.Use(cors.Handler(cors.Options{
			AllowedOrigins:   h.cfg.CORSAllowedOrigins,
			AllowedMethods:   []string{"GET", "PUT", "PATCH", "POST", "DELETE", "OPTIONS"},
			AllowedHeaders:   []string{"Authorization", "Content-Type", "If-Match", "If-None-Match", "Last-Event-ID"},
			ExposedHeaders:   []string{"X-Revision", "ETag", "X-Create-Revision", "X-Version", "X-Lease", "X-Request-Id"},
			AllowCredentials: false,
			MaxAge:           600,
		}))
	}
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		h.writeError(w, r, errorf(codeNotFound, "no route for %q: GET /openapi.json lists every path", r.URL.Path))
	})
	r.MethodNotAllowed(h.methodNotAllowed)

	r.Group(func(r chi.Router) {
		r.Use(h.deadlines)
		r.Get("/health", h.health)
		r.Method(http.MethodGet, "/metrics", h.serveMetrics())
		r.Get("/openapi.json", h.openAPI)
		r.Get("/swagger.json", h.swagger)
		console := web.Handler()
		r.Method(http.MethodGet, "/", console)
		r.Method(http.MethodGet, "/console.js", console)
		r.Method(http.MethodGet, "/console.css", console)
		r.Method(http.MethodGet, "/console/*", console)
	})

	r.Route("/v1", func(r chi.Router) {
		r.Use(h.checkQuery)
		// Streams.
		r.Group(func(r chi.Router) {
			r.Use(h.authenticate, h.limitBody)
			r.Get("/watch", h.watch)
			r.With(h.onlyQuery(readWatchStreamParams)).Get("/watch/streams/{stream}", h.readWatchStream)
			r.With(h.noQuery).Get("/elections/{name}/observe", h.observe)
			// A snapshot bounds each of its writes itself.
			r.With(h.noQuery).Get("/snapshot", h.snapshot)
		})
		// What needs no token.
		r.Group(func(r chi.Router) {
			r.Use(h.deadlines, h.limitBody, h.noQuery)
			r.Get("/auth/status", h.authStatus)
			r.Post("/auth/token", h.authToken)
		})
		// An import, whose body --max-import-bytes bounds instead.
		r.Group(func(r chi.Router) {
			r.Use(h.deadlines, h.authenticate, h.limitImportBody)
			r.Post("/import", h.importRange)
		})
		// Everything else.
		r.Group(func(r chi.Router) {
			r.Use(h.deadlines, h.authenticate, h.limitBody)
			// The routes that take query parameters; each handler declares
			// its own. /v1/kv is the whole key space; /v1/kv/ names the
			// empty key, which the key handlers refuse. A lock's, an
			// election's, a user's or a role's name is one path segment,
			// percent-decoded (pathName, pathParam); a slash in it is
			// written %2F. (An election's observe is a stream, above.)
			r.Get("/kv", h.listKeys)
			r.Delete("/kv", h.deleteRange)
			r.Get("/kv/*", h.getKey)
			r.Put("/kv/*", h.putKey)
			r.With(h.noQuery).Patch("/kv/*", h.patchKey)
			r.Delete("/kv/*", h.deleteKey)
			r.Get("/export", h.export)
			r.Get("/history", h.history)
			r.Post("/locks/{name}", h.lock)
			r.Delete("/locks/{name}", h.unlock)
			r.Post("/elections/{name}/campaign", h.campaign)
			r.Delete("/auth/roles/{name}/permissions", h.revokePermission)
			// A subrouter, so that /v1/leases and /v1/leases/ are one.
			r.Route("/leases", func(r chi.Router) {
				r.Get("/{id}", h.leaseTimeToLive)
				r.Get("/", h.listLeases)
				r.With(h.noQuery).Post("/", h.grantLease)
				r.With(h.noQuery).Post("/{id}/keepalive", h.keepAliveLease)
				r.With(h.noQuery).Delete("/{id}", h.revokeLease)
			})
			// The rest take no query parameters.
			r.Group(func(r chi.Router) {
				r.Use(h.noQuery)
				r.Post("/txn", h.txn)
				r.Post("/restore", h.restoreRange)
				// Streams of many watchers; reading one is a stream, above.
				r.Post("/watch/streams", h.createWatchStream)
				r.Delete("/watch/streams/{stream}", h.deleteWatchStream)
				r.Post("/watch/streams/{stream}/watches", h.addStreamWatch)
				r.Delete("/watch/streams/{stream}/watches/{watch_id}", h.deleteStreamWatch)
				r.Post("/elections/{name}/proclaim", h.proclaim)
				r.Post("/elections/{name}/resign", h.resign)
				r.Get("/elections/{name}/leader", h.leader)
				r.Post("/compact", h.compact)
				r.Get("/status", h.status)
				r.Post("/defrag", h.defrag)
				r.Get("/alarms", h.listAlarms)
				r.Delete("/alarms", h.disarmAlarms)
				r.Post("/auth/enable", h.authEnable)
				r.Post("/auth/disable", h.authDisable)
				r.Get("/auth/users", h.listUsers)
				r.Post("/auth/users", h.addUser)
				r.Get("/auth/users/{name}", h.getUser)
				r.Delete("/auth/users/{name}", h.deleteUser)
				r.Put("/auth/users/{name}/password", h.changePassword)
				r.Put("/auth/users/{name}/roles/{role}", h.grantRole)
				r.Delete("/auth/users/{name}/roles/{role}", h.revokeRole)
				r.Get("/auth/roles", h.listRoles)
				r.Post("/auth/roles", h.addRole)
				r.Get("/auth/roles/{name}", h.getRole)
				r.Delete("/auth/roles/{name}", h.deleteRole)
				r.Post("/auth/roles/{name}/permissions", h.grantPermission)
			})
		})
	})
	return r
}

// methodNotAllowed answers a method a path does not have with the ones it
// has, in the Allow header and in the message.
func (h *Handler) methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	allow := h.methods.of(r.URL.Path)
	list := strings.Join(allow, ", ")
	w.Header().Set("Allow", list)
	h.writeError(w, r, errorf(codeMethodNotAllowed, "%.16q is not allowed on %q: use %s", r.Method, r.URL.Path, list))
}

// methodIndex answers which methods the router has for a path. It is a
// flat copy of the router's routes: the router's own Match takes the
// path of a subrouter (/v1/leases) for a stub that has every method.
type methodIndex struct{ flat *chi.Mux }

// routeMethods are the methods a route can have.
var routeMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

func newMethodIndex(router chi.Routes) (methodIndex, error) {
	flat := chi.NewMux()
	noop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	err := chi.Walk(router, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		flat.Method(method, route, noop)
		if trimmed := strings.TrimSuffix(route, "/"); trimmed != route && trimmed != "" {
			// A subrouter's "/" route answers its own path too.
			flat.Method(method, trimmed, noop)
		}
		return nil
	})
	return methodIndex{flat: flat}, err
}

func (x methodIndex) of(path string) []string {
	var out []string
	for _, m := range routeMethods {
		if x.flat.Match(chi.NewRouteContext(), m, path) {
			out = append(out, m)
		}
	}
	return out
}
