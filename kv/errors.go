package kv

import (
	"errors"
	"fmt"
)

// Code names a kind of failure as the API's clients see it: httpapi maps
// each code to an HTTP status in one table, and answers with the code and
// the error's message. Backends and the packages under them speak only
// of codes, never of HTTP.
type Code string

// The codes a request can fail with. Their statuses and meanings are in
// docs/errors.md.
const (
	CodeInvalidArgument    Code = "invalid_argument"
	CodeFutureRevision     Code = "future_revision"
	CodeUnauthenticated    Code = "unauthenticated"
	CodePermissionDenied   Code = "permission_denied"
	CodeKeyNotFound        Code = "key_not_found"
	CodeLeaseNotFound      Code = "lease_not_found"
	CodeUserNotFound       Code = "user_not_found"
	CodeRoleNotFound       Code = "role_not_found"
	CodePermissionNotFound Code = "permission_not_found"
	CodeNoLeader           Code = "no_leader"
	CodeLockTimeout        Code = "lock_timeout"
	CodeAlreadyExists      Code = "already_exists"
	CodeCompacted          Code = "compacted"
	CodeNotLeader          Code = "not_leader"
	CodeTooManyRequests    Code = "too_many_requests"
	CodeUnavailable        Code = "unavailable"
	CodeNoSpace            Code = "no_space"
	CodeNotSupported       Code = "not_supported"
	CodeInternal           Code = "internal"
	// CodePreconditionFailed: a condition of the request (If-Match) did
	// not hold.
	CodePreconditionFailed Code = "precondition_failed"
	// CodePatchFailed: a patch cannot apply to the value it was given.
	CodePatchFailed Code = "patch_failed"
)

// Error is a failure with a code and a message meant for the client: no
// package prefix, the offending value quoted, and what to do when there
// is something to do. Sentinels are *Error values; an error about one
// case of a sentinel (Errorf) keeps it as its cause, so that errors.Is
// still tells it apart.
type Error struct {
	Code    Code
	Message string
	// Cause is the sentinel this error is a case of, or nil.
	Cause error
}

func (e *Error) Error() string { return e.Message }

// Unwrap returns the sentinel e is a case of.
func (e *Error) Unwrap() error { return e.Cause }

// NewError returns a sentinel error.
func NewError(code Code, message string) *Error {
	return &Error{Code: code, Message: message}
}

// Errorf returns a case of the sentinel: its code, a message of its own,
// and errors.Is(err, sentinel) holds. The message replaces the
// sentinel's, so it says everything the client needs.
func Errorf(sentinel *Error, format string, args ...any) *Error {
	return &Error{Code: sentinel.Code, Message: fmt.Sprintf(format, args...), Cause: sentinel}
}

// ErrorCode returns e's code.
func (e *Error) ErrorCode() Code { return e.Code }

// Coded is an error that carries its code: an *Error, or a richer error
// of its own type (*CompactedError).
type Coded interface {
	error
	ErrorCode() Code
}

// CodeOf returns the code of the first Coded error in err's chain, and
// that error's message; ok is false when there is none: an error that is
// the server's own trouble, not a failure the API defines.
func CodeOf(err error) (code Code, message string, ok bool) {
	var c Coded
	if !errors.As(err, &c) {
		return "", "", false
	}
	return c.ErrorCode(), c.Error(), true
}

// Sentinel errors. Callers tell failures apart with errors.Is; httpapi
// answers each with its code. Their messages say what failed and what
// to do in the store's terms; the routes and flags that help are the
// API's to add (httpapi/error_hints.go).
var (
	// ErrCompacted: the requested revision is below the compact revision.
	// The concrete error is a *CompactedError naming that revision.
	ErrCompacted = NewError(CodeCompacted, "the revision has been compacted")
	// ErrFutureRevision: the requested revision is above the current one.
	ErrFutureRevision = NewError(CodeFutureRevision, "the revision is above the store's current revision")
	// ErrKeyNotFound: ignore_value or ignore_lease on a key that does not
	// exist.
	ErrKeyNotFound = NewError(CodeKeyNotFound, "the key does not exist")
	// ErrLeaseNotFound: no lease has the ID (a put with it, a revoke, a
	// keep-alive of an expired one). LeaseNotFound names the ID.
	ErrLeaseNotFound = NewError(CodeLeaseNotFound, "the lease does not exist")
	// ErrLeaseExists: a grant asked for an ID a lease already has.
	ErrLeaseExists = NewError(CodeAlreadyExists, "a lease with this ID already exists")
	// ErrInvalidArgument: the request is malformed (empty key, unknown sort
	// target, value given with ignore_value, ...). The concrete error says
	// which.
	ErrInvalidArgument = NewError(CodeInvalidArgument, "invalid argument")
	// ErrTooManyOps: a txn has more compares or ops than allowed.
	ErrTooManyOps = Errorf(ErrInvalidArgument, "too many operations in the txn")
	// ErrDuplicateKey: a txn writes the same key twice.
	ErrDuplicateKey = Errorf(ErrInvalidArgument, "the txn writes one key twice: give each key at most one put or delete")
	// ErrNoSpace: the backend quota is exceeded; the NOSPACE alarm is active.
	ErrNoSpace = NewError(CodeNoSpace, "the backend quota is exceeded (NOSPACE alarm)")
	// ErrTooManyLeases: a grant would pass the bound on the leases alive at
	// once.
	ErrTooManyLeases = NewError(CodeTooManyRequests, "too many leases are alive: revoke some, or wait for some to expire")
	// ErrNotSupported: the backend cannot do this at all, as it is set up
	// (a whole-store snapshot of one namespace of a shared etcd cluster).
	// The concrete error says what to use instead.
	ErrNotSupported = NewError(CodeNotSupported, "the backend does not support this")
	// ErrSnapshotUnsupported: a snapshot, which holds a whole store, of a
	// backend that serves part of one (a gateway of one namespace of a
	// shared etcd cluster).
	ErrSnapshotUnsupported = Errorf(ErrNotSupported, "a snapshot holds the whole store, and this backend serves part of it")
	// ErrClusterWide: an operation of a whole shared store (compaction,
	// defragmentation, alarms of an etcd cluster) through a backend that
	// serves one deployment of it, and is not the one that administers it.
	ErrClusterWide = Errorf(ErrNotSupported, "this operation is the whole store's, every deployment's on it, and this backend serves one of them")
	// ErrUnavailable: the backend cannot serve the request now. ErrClosed
	// and ErrBackendFailed say why when it is known.
	ErrUnavailable = NewError(CodeUnavailable, "the server cannot serve this now: it is shutting down, or its backend failed")
	// ErrClosed: the backend is closed or closing.
	ErrClosed = Errorf(ErrUnavailable, "the server is shutting down: retry after Retry-After")
	// ErrBackendFailed: a commit to the backend failed. It refuses every
	// further write; nothing after the last successful commit was
	// acknowledged. Restart to recover.
	ErrBackendFailed = Errorf(ErrUnavailable, "the backend failed; the server takes no more writes until it is restarted")
	// ErrBackendTimeout: the backend's store (etcd, behind a gateway)
	// did not answer within the time a request may wait for it.
	ErrBackendTimeout = Errorf(ErrUnavailable, "the backend did not answer in time")
	// ErrHistoryBusy: the backend reads as much history at once as it may
	// (over etcd, each read of history is an etcd watch).
	ErrHistoryBusy = NewError(CodeTooManyRequests, "the server reads as much history at once as it may")
)

// LeaseNotFound is ErrLeaseNotFound for the lease id.
func LeaseNotFound(id int64) error {
	return Errorf(ErrLeaseNotFound, "lease %d does not exist (it expired or was revoked)", id)
}

// FutureRevision is ErrFutureRevision for a request's revision rev (what
// names it: "revision", "compact revision", ...) above the current one.
func FutureRevision(what string, rev, current int64) error {
	return Errorf(ErrFutureRevision, "the %s %d is above the store's current revision %d", what, rev, current)
}

// CompactedError is returned for reads below the compact revision.
type CompactedError struct {
	// CompactRevision is the compact revision at the time of the read.
	CompactRevision int64
}

func (e *CompactedError) Error() string {
	return fmt.Sprintf("the revision has been compacted: read at or above the compact revision %d", e.CompactRevision)
}

// Unwrap makes errors.Is(err, ErrCompacted) hold.
func (e *CompactedError) Unwrap() error { return ErrCompacted }

// ErrorCode returns CodeCompacted.
func (e *CompactedError) ErrorCode() Code { return CodeCompacted }

// Invalidf returns an ErrInvalidArgument saying what is wrong.
func Invalidf(format string, args ...any) error {
	return Errorf(ErrInvalidArgument, format, args...)
}
