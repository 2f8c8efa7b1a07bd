package lease

import "errors"

// Sentinel errors. Callers tell failures apart with errors.Is.
var (
	// ErrNotFound: no lease has the ID, or it has expired and waits to be
	// revoked.
	ErrNotFound = errors.New("lease: not found")
	// ErrExists: Grant asked for an ID that a lease already has.
	ErrExists = errors.New("lease: already exists")
	// ErrInvalidTTL: Grant's TTL is not positive or is above MaxTTL.
	ErrInvalidTTL = errors.New("lease: invalid TTL")
	// ErrInvalidID: Grant asked for an ID outside [1, MaxID].
	ErrInvalidID = errors.New("lease: invalid ID")
	// ErrCorrupt: Restore found a record this version cannot read.
	ErrCorrupt = errors.New("lease: corrupt record")
)
