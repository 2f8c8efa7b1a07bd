package mvcc

import (
	"errors"
	"fmt"
)

// Sentinel errors. Callers tell failures apart with errors.Is.
var (
	// ErrCompacted: the requested revision is below the compact revision.
	// The concrete error is a *CompactedError naming that revision.
	ErrCompacted = errors.New("mvcc: required revision has been compacted")
	// ErrFutureRev: the requested revision is above the current revision.
	ErrFutureRev = errors.New("mvcc: required revision is a future revision")
	// ErrKeyNotFound: ignore_value or ignore_lease on a key that does not exist.
	ErrKeyNotFound = errors.New("mvcc: key not found")
	// ErrLeaseNotFound: a put names a lease that does not exist.
	ErrLeaseNotFound = errors.New("mvcc: lease not found")
	// ErrInvalidArgument: the request is malformed (empty key, unknown sort
	// target, value given with ignore_value, ...). The concrete error says which.
	ErrInvalidArgument = errors.New("mvcc: invalid argument")
	// ErrTooManyOps: a txn has more compares or ops than allowed.
	ErrTooManyOps = fmt.Errorf("%w: too many operations in txn request", ErrInvalidArgument)
	// ErrDuplicateKey: a txn writes the same key twice.
	ErrDuplicateKey = fmt.Errorf("%w: duplicate key given in txn request", ErrInvalidArgument)
	// ErrNoSpace: the backend quota is exceeded; the NOSPACE alarm is active.
	ErrNoSpace = errors.New("mvcc: database space exceeded")
	// ErrClosed: the store is closed or closing.
	ErrClosed = errors.New("mvcc: store closed")
	// ErrReadOnly: a write to a store opened with Options.ReadOnly.
	ErrReadOnly = errors.New("mvcc: store opened read-only")
	// ErrCorrupt: the data file holds something this version cannot read,
	// or is shorter than its own meta page says.
	ErrCorrupt = errors.New("mvcc: corrupt data")
	// ErrLocked: another process (or another Store in this one) has the
	// data file open.
	ErrLocked = errors.New("mvcc: data file locked by another process")
	// ErrBackendFailed: a commit to the data file failed. The store refuses
	// every further write; nothing after the last successful commit was
	// acknowledged. Restart to recover.
	ErrBackendFailed = errors.New("mvcc: backend failed")
)

// CompactedError is returned for reads below the compact revision.
type CompactedError struct {
	// CompactRevision is the store's compact revision at the time of the read.
	CompactRevision int64
}

func (e *CompactedError) Error() string {
	return fmt.Sprintf("%v (compact revision %d)", ErrCompacted, e.CompactRevision)
}

// Is makes errors.Is(err, ErrCompacted) hold.
func (e *CompactedError) Is(target error) bool { return target == ErrCompacted }

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidArgument}, args...)...)
}
