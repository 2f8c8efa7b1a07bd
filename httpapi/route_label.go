package httpapi

import (
	"sync"

	"github.com/go-chi/chi/v5"
)

// routeLabels remembers the route pattern chi builds for each list of
// matched patterns: chi joins and rewrites them anew, in three
// allocations, each time it is asked, and the request log and metrics ask
// on every request. The keys are the server's registered patterns, never
// a client's input, so the map stays as small as the route table.
var routeLabels sync.Map // [maxRouteDepth]string -> string

// maxRouteDepth is the most nested routers a remembered pattern has; a
// deeper one (none today) is built every time.
const maxRouteDepth = 4

// routeLabel returns rc.RoutePattern(), remembered.
func routeLabel(rc *chi.Context) string {
	ps := rc.RoutePatterns
	if len(ps) == 0 || len(ps) > maxRouteDepth {
		return rc.RoutePattern()
	}
	var k [maxRouteDepth]string
	copy(k[:], ps)
	if p, ok := routeLabels.Load(k); ok {
		return p.(string)
	}
	p := rc.RoutePattern()
	routeLabels.Store(k, p)
	return p
}
