package httpapi

import (
	"errors"
	"net/http"
	"time"

	"github.com/httpkv/httpkv/keyrange"
)

// Access is everything one request can touch. A request is allowed only if
// every range is covered in full, not merely overlapped.
type Access struct {
	Read  []keyrange.Range
	Write []keyrange.Range
	// Admin marks operations reserved to the root role: compaction,
	// defrag, alarms, status details, auth administration.
	Admin bool
}

// Authorizer decides whether a request may have the access it asks for.
// It is the one place every request's keys pass through.
type Authorizer interface {
	// Authorize returns nil when r may have a, or an error whose code
	// (kv.CodeUnauthenticated, kv.CodePermissionDenied) answers 401 or
	// 403.
	Authorize(r *http.Request, a Access) error
}

// streamAuthorizer is an Authorizer whose decisions can change while a
// stream it allowed is open: the stream waits on Changed and then asks
// Recheck for the caller Identify named when it began, so that a stream
// outlives neither its permission nor the token it was opened with; and
// it ends when that token expires.
type streamAuthorizer interface {
	Authorizer
	Changed() <-chan struct{}
	Identify(r *http.Request) (streamCaller, error)
	Recheck(c streamCaller, a Access) error
}

// streamCaller is who opened a stream: the user, the token it came with
// ("" when auth was off), and when that token expires (zero without one).
type streamCaller struct {
	user, token string
	expires     time.Time
}

// Why a stream's credentials stopped being good: the reasons of its
// canceled message.
var (
	errTokenExpired = errors.New("token expired")
	errTokenRevoked = errors.New("token revoked")
	errUserDeleted  = errors.New("user deleted")
	errAuthDisabled = errors.New("auth disabled")
	errAuthEnabled  = errors.New("auth enabled: a token is needed")
)

// streamEndReason is the canceled message's reason for a Recheck error.
func streamEndReason(err error) string {
	for _, e := range []error{errTokenExpired, errTokenRevoked, errUserDeleted, errAuthDisabled, errAuthEnabled} {
		if errors.Is(err, e) {
			return e.Error()
		}
	}
	return "permission denied"
}

// authenticator is an Authorizer that can tell whether a request carries
// valid credentials before anything of it but its head is read.
type authenticator interface {
	Authenticate(r *http.Request) error
}

// authenticate refuses a request without valid credentials before its
// body is read, so that a client without a token cannot make the server
// receive and hold bodies. What the request may touch is decided later,
// by authorize, once the handler knows it.
func (h *Handler) authenticate(next http.Handler) http.Handler {
	a, ok := h.cfg.Authorizer.(authenticator)
	if !ok {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := a.Authenticate(r); err != nil {
			h.writeError(w, r, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// allowAll is the Authorizer when auth is not configured.
type allowAll struct{}

func (allowAll) Authorize(*http.Request, Access) error { return nil }

// authorize checks a against the configured Authorizer and answers the
// request when it is refused. It reports whether to go on.
func (h *Handler) authorize(w http.ResponseWriter, r *http.Request, a Access) bool {
	if err := h.cfg.Authorizer.Authorize(r, a); err != nil {
		h.writeError(w, r, err)
		return false
	}
	return true
}
