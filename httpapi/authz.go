package httpapi

import (
	"errors"
	"net/http"

	"github.com/httpkv/httpkv/auth"
	"github.com/httpkv/httpkv/stream"
	"github.com/httpkv/httpkv/stream/multi"
)

// Access is everything one request can touch, as auth's policy reads
// it: the handlers collect the ranges a request reads and writes, and
// whether it is an administrative operation, and the Authorizer decides.
type Access = auth.Need

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

// streamCaller is who opened a stream (see auth.Caller).
type streamCaller = auth.Caller

// reasonTokenExpired ends a stream whose token's time is up.
const reasonTokenExpired = "token expired"

// streamEndReasons are the canceled message's reasons for the errors
// Recheck gives, and those the stream loop ends a stream for, in the
// contract's words.
var streamEndReasons = []struct {
	err    error
	reason string
}{
	{stream.ErrShutdown, "shutting down"},
	{stream.ErrTokenExpired, reasonTokenExpired},
	{auth.ErrTokenExpired, reasonTokenExpired},
	{auth.ErrTokenRevoked, "token revoked"},
	{auth.ErrUserDeleted, "user deleted"},
	{auth.ErrAuthDisabled, "auth disabled"},
	{auth.ErrAuthEnabled, "auth enabled: a token is needed"},
	{multi.ErrGatewayWatchers, "too many watchers on this gateway (--max-watchers)"},
}

// streamEndReason is the canceled message's reason for a Recheck error,
// or the stream loop's.
func streamEndReason(err error) string {
	for _, e := range streamEndReasons {
		if errors.Is(err, e.err) {
			return e.reason
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
