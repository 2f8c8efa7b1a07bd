package kv

import (
	"errors"
	"fmt"
)

// Sentinel errors. Callers tell failures apart with errors.Is; httpapi
// maps each to a status and a code.
var (
	// ErrCompacted: the requested revision is below the compact revision.
	// The concrete error is a *CompactedError naming that revision.
	ErrCompacted = errors.New("mvcc: required revision has been compacted")
	// ErrFutureRevision: the requested revision is above the current one.
	ErrFutureRevision = errors.New("mvcc: required revision is a future revision")
	// ErrKeyNotFound: ignore_value or ignore_lease on a key that does not
	// exist.
	ErrKeyNotFound = errors.New("mvcc: key not found")
	// ErrLeaseNotFound: no lease has the ID (a put with it, a revoke, a
	// keep-alive of an expired one).
	ErrLeaseNotFound = errors.New("lease not found")
	// ErrLeaseExists: a grant asked for an ID a lease already has.
	ErrLeaseExists = errors.New("lease already exists")
	// ErrInvalidArgument: the request is malformed (empty key, unknown sort
	// target, value given with ignore_value, ...). The concrete error says
	// which.
	ErrInvalidArgument = errors.New("mvcc: invalid argument")
	// ErrTooManyOps: a txn has more compares or ops than allowed.
	ErrTooManyOps = fmt.Errorf("%w: too many operations in txn request", ErrInvalidArgument)
	// ErrDuplicateKey: a txn writes the same key twice.
	ErrDuplicateKey = fmt.Errorf("%w: duplicate key given in txn request", ErrInvalidArgument)
	// ErrNoSpace: the backend quota is exceeded; the NOSPACE alarm is active.
	ErrNoSpace = errors.New("mvcc: database space exceeded")
	// ErrUnavailable: the backend cannot serve the request now. ErrClosed
	// and ErrBackendFailed say why when it is known.
	ErrUnavailable = errors.New("backend unavailable")
	// ErrClosed: the backend is closed or closing.
	ErrClosed = fmt.Errorf("%w: mvcc: store closed", ErrUnavailable)
	// ErrBackendFailed: a commit to the backend failed. It refuses every
	// further write; nothing after the last successful commit was
	// acknowledged. Restart to recover.
	ErrBackendFailed = fmt.Errorf("%w: mvcc: backend failed", ErrUnavailable)
)

// CompactedError is returned for reads below the compact revision.
type CompactedError struct {
	// CompactRevision is the compact revision at the time of the read.
	CompactRevision int64
}

func (e *CompactedError) Error() string {
	return fmt.Sprintf("%v (compact revision %d)", ErrCompacted, e.CompactRevision)
}

// Is makes errors.Is(err, ErrCompacted) hold.
func (e *CompactedError) Is(target error) bool { return target == ErrCompacted }

// Invalidf returns an ErrInvalidArgument saying what is wrong.
func Invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidArgument}, args...)...)
}
