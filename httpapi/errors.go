package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/httpkv/httpkv/kv"
	"github.com/httpkv/httpkv/wire"
)

// Codes of failures that only HTTP has: the rest are kv's.
const (
	codeNotFound             kv.Code = "not_found"
	codeMethodNotAllowed     kv.Code = "method_not_allowed"
	codeRequestTooLarge      kv.Code = "request_too_large"
	codeUnsupportedMediaType kv.Code = "unsupported_media_type"
	codeStreamNotFound       kv.Code = "stream_not_found"
	codeWatchNotFound        kv.Code = "watch_not_found"
)

// statusOf is the one table from error codes to HTTP statuses. Every
// error a client sees goes through it (writeError); docs/errors.md lists
// each row with an example, and TestErrorsDoc holds the two together.
var statusOf = map[kv.Code]int{
	kv.CodeInvalidArgument:    http.StatusBadRequest,
	kv.CodeFutureRevision:     http.StatusBadRequest,
	kv.CodeUnauthenticated:    http.StatusUnauthorized,
	kv.CodePermissionDenied:   http.StatusForbidden,
	codeNotFound:              http.StatusNotFound,
	kv.CodeKeyNotFound:        http.StatusNotFound,
	kv.CodeLeaseNotFound:      http.StatusNotFound,
	kv.CodeUserNotFound:       http.StatusNotFound,
	kv.CodeRoleNotFound:       http.StatusNotFound,
	kv.CodePermissionNotFound: http.StatusNotFound,
	kv.CodeNoLeader:           http.StatusNotFound,
	codeStreamNotFound:        http.StatusNotFound,
	codeWatchNotFound:         http.StatusNotFound,
	codeMethodNotAllowed:      http.StatusMethodNotAllowed,
	kv.CodeLockTimeout:        http.StatusRequestTimeout,
	kv.CodeAlreadyExists:      http.StatusConflict,
	kv.CodeCompacted:          http.StatusGone,
	kv.CodePreconditionFailed: http.StatusPreconditionFailed,
	kv.CodePatchFailed:        http.StatusConflict,
	codeUnsupportedMediaType:  http.StatusUnsupportedMediaType,
	kv.CodeNotLeader:          http.StatusPreconditionFailed,
	codeRequestTooLarge:       http.StatusRequestEntityTooLarge,
	kv.CodeTooManyRequests:    http.StatusTooManyRequests,
	kv.CodeInternal:           http.StatusInternalServerError,
	kv.CodeUnavailable:        http.StatusServiceUnavailable,
	kv.CodeNoSpace:            http.StatusInsufficientStorage,
	kv.CodeNotSupported:       http.StatusNotImplemented,
}

// apiError is an error of this package's own making, with the extra
// fields of its error object (compact_revision, kv, ...). It is a
// kv.Coded error like the domain's, and goes through the same table.
type apiError struct {
	code    kv.Code
	message string
	extra   map[string]any
}

func (e *apiError) Error() string      { return e.message }
func (e *apiError) ErrorCode() kv.Code { return e.code }

// errorf returns an apiError with code.
func errorf(code kv.Code, format string, args ...any) *apiError {
	return &apiError{code: code, message: fmt.Sprintf(format, args...)}
}

// badRequest reports malformed input.
func badRequest(format string, args ...any) *apiError {
	return errorf(kv.CodeInvalidArgument, format, args...)
}

// with adds an extra field to e's error object.
func (e *apiError) with(name string, v any) *apiError {
	if e.extra == nil {
		e.extra = map[string]any{}
	}
	e.extra[name] = v
	return e
}

// toAPIError turns err into what the client is told: its code, its
// message with the API's hint (errorHints) and extra fields. An error without a code is the server's own
// trouble and answers 500 with no internals; so does the text of any 5xx
// but those whose messages are written for clients.
func toAPIError(err error) *apiError {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return tooLarge(mbe.Limit)
	}
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	if ae := streamError(err); ae != nil {
		return ae
	}
	// The wire's refusals are written for clients, as this package's are.
	var we *wire.Error
	if errors.As(err, &we) {
		return &apiError{code: we.Code, message: we.Message}
	}
	code, msg, ok := kv.CodeOf(err)
	if !ok {
		return errorf(kv.CodeInternal, "internal error")
	}
	out := &apiError{code: code, message: msg + errorHintOf(err)}
	var ce *kv.CompactedError
	if errors.As(err, &ce) {
		out.with("compact_revision", ce.CompactRevision)
	}
	var tle *kv.TooLargeError
	if errors.As(err, &tle) {
		if tle.MaxKeys > 0 {
			out.with("max_keys", tle.MaxKeys)
		} else {
			out.with("max_response_bytes", tle.MaxBytes)
		}
	}
	if code == kv.CodeInternal {
		out.message = "internal error"
	}
	return out
}

// tooLarge is the answer to a body over limit bytes.
func tooLarge(limit int64) *apiError {
	return errorf(codeRequestTooLarge, "the request body is larger than %d bytes: send less, or raise the server's --max-request-bytes", limit)
}

// statusClientClosed is the status the request log and the metrics give
// a request whose client left before its answer (nginx's 499): a hang-up
// is the client's doing, not a failure of the server's (500).
const statusClientClosed = 499

// writeError is the one way a handler answers with an error: err in the
// contract's error format, its status from statusOf. Errors that are the
// server's (5xx) are logged with the request id. A request that failed
// because its client left is answered statusClientClosed and nothing
// else: nobody reads it.
func (h *Handler) writeError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		w.WriteHeader(statusClientClosed)
		return
	}
	// A 501 is the backend's answer to what the client asked, not a
	// failure of the server's.
	if status := answerError(w, err); status >= 500 && status != http.StatusNotImplemented {
		h.log(r).Error().Err(err).Int("status", status).Msg("request failed")
	}
}

// answerError writes err as writeError does, without the log line, for
// the writers that have no request to log it with; it returns the status.
func answerError(w http.ResponseWriter, err error) int {
	ae := toAPIError(err)
	status := statusOf[ae.code]
	if status == 0 {
		status = http.StatusInternalServerError
	}
	body := map[string]any{"code": ae.code, "message": ae.message}
	for k, v := range ae.extra {
		body[k] = v
	}
	switch status {
	case http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", "Bearer")
	case http.StatusServiceUnavailable:
		// Shutting down, or a backend that cannot serve now (an etcd
		// cluster without a quorum): come back.
		w.Header().Set("Retry-After", "1")
	case http.StatusTooManyRequests:
		// A bound that frees itself (leases expire, answers finish).
		if w.Header().Get("Retry-After") == "" {
			w.Header().Set("Retry-After", "1")
		}
	}
	writeJSON(w, status, map[string]any{"error": body})
	return status
}
