package concurrency

import "github.com/httpkv/httpkv/kv"

// Sentinel errors. Callers tell failures apart with errors.Is; each
// carries the code the API answers it with.
var (
	// ErrInvalid: a request is malformed (an empty name, no lease, an
	// owner key outside the name's prefix). The concrete error says which.
	ErrInvalid = kv.Errorf(kv.ErrInvalidArgument, "invalid lock or election request")
	// ErrTimeout: a lock or a campaign was not won within its timeout;
	// its waiting key has been removed.
	ErrTimeout = kv.NewError(kv.CodeLockTimeout, "not acquired within the timeout; its waiting key was removed: try again, or give a longer timeout (at most 5m)")
	// ErrLeaseNotFound: the lease a waiter's key was attached to expired
	// or was revoked while it waited.
	ErrLeaseNotFound = kv.Errorf(kv.ErrLeaseNotFound, "the waiter's lease expired or was revoked while it waited: grant a new lease and try again")
	// ErrKeyDeleted: a waiter's key was deleted while it waited, its lease
	// still alive (someone released it for the waiter).
	ErrKeyDeleted = kv.Errorf(kv.ErrKeyNotFound, "the waiting key was deleted while it waited: try again")
	// ErrNotLeader: a proclaim or a resign by a candidate whose key no
	// longer exists as it was created (resigned, expired, replaced).
	ErrNotLeader = kv.NewError(kv.CodeNotLeader, "the candidate is no longer the leader (it resigned, or its lease expired): campaign again")
	// ErrNoLeader: an election has no candidate.
	ErrNoLeader = kv.NewError(kv.CodeNoLeader, "the election has no leader")
	// ErrWatchEnded: the store ended a watch a waiter or an observer
	// needed (it is shutting down).
	ErrWatchEnded = kv.Errorf(kv.ErrUnavailable, "the server is shutting down")
)

func invalidf(format string, args ...any) error {
	return kv.Errorf(ErrInvalid, format, args...)
}
