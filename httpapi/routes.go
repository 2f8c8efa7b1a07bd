package httpapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/cors"

	"github.com/httpkv/httpkv/web"
)

// routes lays out every route of the API in one place.
//
// Every request gets an id, a log line, metrics and panic recovery.
// Requests that are not streams also get read and write deadlines
// (deadlines); streams set a deadline on each of their sends instead.
// Under /v1, a malformed query string is refused first, then a request
// without valid credentials (before its body is read: only the token
// and auth status endpoints need none), then a body over the limits.
func (h *Handler) routes() chi.Router {
	r := chi.NewRouter()
	r.Use(h.requestID)
	r.Use(h.requestLog)
	r.Use(h.recoverer)
	r.Use(noSniff)
	if len(h.cfg.CORSAllowedOrigins) > 0 {
		r.Use(cors.Handler(cors.Options{
			AllowedOrigins:   h.cfg.CORSAllowedOrigins,
			AllowedMethods:   []string{"GET", "PUT", "POST", "DELETE", "OPTIONS"},
			AllowedHeaders:   []string{"Authorization", "Content-Type", "If-Match", "If-None-Match", "Last-Event-ID"},
			ExposedHeaders:   []string{"X-Revision", "ETag", "X-Create-Revision", "X-Version", "X-Lease", "X-Request-Id"},
			AllowCredentials: false,
			MaxAge:           600,
		}))
	}
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		writeAPIError(w, &apiError{status: http.StatusNotFound, code: "not_found", message: "no route for " + r.URL.Path})
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		writeAPIError(w, &apiError{status: http.StatusMethodNotAllowed, code: "method_not_allowed", message: r.Method + " is not allowed on " + r.URL.Path})
	})

	r.Group(func(r chi.Router) {
		r.Use(deadlines)
		r.Get("/health", h.health)
		r.Method(http.MethodGet, "/metrics", h.metrics.handler())
		r.Get("/openapi.json", h.openAPI)
		r.Get("/swagger.json", h.swagger)
		console := web.Handler()
		r.Method(http.MethodGet, "/", console)
		r.Method(http.MethodGet, "/console.js", console)
		r.Method(http.MethodGet, "/console.css", console)
		r.Method(http.MethodGet, "/console/*", console)
	})

	r.Route("/v1", func(r chi.Router) {
		r.Use(checkQuery)
		// Streams.
		r.Group(func(r chi.Router) {
			r.Use(h.authenticate, h.limitBody)
			r.Get("/watch", h.watch)
			r.Get("/elections/{name}/observe", h.observe)
			// A snapshot bounds each of its writes itself.
			r.Get("/snapshot", h.snapshot)
		})
		// What needs no token.
		r.Group(func(r chi.Router) {
			r.Use(deadlines, h.limitBody)
			r.Get("/auth/status", h.authStatus)
			r.Post("/auth/token", h.authToken)
		})
		// Everything else.
		r.Group(func(r chi.Router) {
			r.Use(deadlines, h.authenticate, h.limitBody)
			// /v1/kv is the whole key space; /v1/kv/ names the empty key,
			// which the key handlers refuse.
			r.Get("/kv", h.listKeys)
			r.Delete("/kv", h.deleteRange)
			r.Get("/kv/*", h.getKey)
			r.Put("/kv/*", h.putKey)
			r.Delete("/kv/*", h.deleteKey)
			r.Post("/txn", h.txn)
			r.Get("/history", h.history)
			r.Route("/leases", func(r chi.Router) {
				r.Post("/", h.grantLease)
				r.Get("/", h.listLeases)
				r.Get("/{id}", h.leaseTimeToLive)
				r.Post("/{id}/keepalive", h.keepAliveLease)
				r.Delete("/{id}", h.revokeLease)
			})
			// A name is one path segment; a slash in it is written %2F.
			// (An election's observe is a stream, with the streams.)
			r.Route("/locks", func(r chi.Router) {
				r.Post("/{name}", h.lock)
				r.Delete("/{name}", h.unlock)
			})
			r.Route("/elections/{name}", func(r chi.Router) {
				r.Post("/campaign", h.campaign)
				r.Post("/proclaim", h.proclaim)
				r.Post("/resign", h.resign)
				r.Get("/leader", h.leader)
			})
			r.Post("/compact", h.compact)
			r.Get("/status", h.status)
			r.Post("/defrag", h.defrag)
			r.Get("/alarms", h.listAlarms)
			r.Delete("/alarms", h.disarmAlarms)
			r.Route("/auth", func(r chi.Router) {
				r.Post("/enable", h.authEnable)
				r.Post("/disable", h.authDisable)
				r.Get("/users", h.listUsers)
				r.Post("/users", h.addUser)
				r.Get("/users/{name}", h.getUser)
				r.Delete("/users/{name}", h.deleteUser)
				r.Put("/users/{name}/password", h.changePassword)
				r.Put("/users/{name}/roles/{role}", h.grantRole)
				r.Delete("/users/{name}/roles/{role}", h.revokeRole)
				r.Get("/roles", h.listRoles)
				r.Post("/roles", h.addRole)
				r.Get("/roles/{name}", h.getRole)
				r.Delete("/roles/{name}", h.deleteRole)
				r.Post("/roles/{name}/permissions", h.grantPermission)
				r.Delete("/roles/{name}/permissions", h.revokePermission)
			})
		})
	})
	return r
}
