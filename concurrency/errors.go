package concurrency

import (
	"errors"
	"fmt"
)

// Sentinel errors. Callers tell failures apart with errors.Is.
var (
	// ErrInvalid: a request is malformed (an empty name, no lease, an
	// owner key outside the name's prefix). The concrete error says which.
	ErrInvalid = errors.New("concurrency: invalid request")
	// ErrTimeout: a lock or a campaign was not won within its timeout;
	// its waiting key has been removed.
	ErrTimeout = errors.New("concurrency: not acquired within the timeout")
	// ErrLeaseNotFound: the lease a waiter's key was attached to expired
	// or was revoked while it waited.
	ErrLeaseNotFound = errors.New("concurrency: lease not found")
	// ErrKeyDeleted: a waiter's key was deleted while it waited, its lease
	// still alive (someone released it for the waiter).
	ErrKeyDeleted = errors.New("concurrency: the waiting key was deleted")
	// ErrNotLeader: a proclaim or a resign by a candidate whose key no
	// longer exists as it was created (resigned, expired, replaced).
	ErrNotLeader = errors.New("concurrency: not the leader")
	// ErrNoLeader: an election has no candidate.
	ErrNoLeader = errors.New("concurrency: no leader")
	// ErrWatchEnded: the store ended a watch a waiter or an observer
	// needed (it is shutting down).
	ErrWatchEnded = errors.New("concurrency: watch ended by the store")
)

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}
