package lease

import (
	"errors"

	"github.com/httpkv/httpkv/kv"
)

// Sentinel errors. Callers tell failures apart with errors.Is. A lease
// that is not found, or whose ID is taken, fails with kv's
// ErrLeaseNotFound and ErrLeaseExists, which every backend shares; the
// invalid arguments below are kv.ErrInvalidArgument too.
var (
	// ErrInvalidTTL: Grant's TTL is not positive or is above MaxTTL.
	ErrInvalidTTL = kv.Errorf(kv.ErrInvalidArgument, "ttl must be a positive number of seconds")
	// ErrInvalidID: Grant asked for an ID outside [1, MaxID].
	ErrInvalidID = kv.Errorf(kv.ErrInvalidArgument, "id must be 0 (let the server choose) or in [1, 2^53-1]")
	// ErrCorrupt: Restore found a record this version cannot read.
	ErrCorrupt = errors.New("corrupt lease record")
)
