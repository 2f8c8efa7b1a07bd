package lease

import (
	"errors"
	"fmt"

	"github.com/httpkv/httpkv/kv"
)

// Sentinel errors. Callers tell failures apart with errors.Is. A lease
// that is not found, or whose ID is taken, fails with kv's
// ErrLeaseNotFound and ErrLeaseExists, which every backend shares; the
// invalid arguments below are kv.ErrInvalidArgument too.
var (
	// ErrInvalidTTL: Grant's TTL is not positive or is above MaxTTL.
	ErrInvalidTTL = fmt.Errorf("%w: lease: invalid TTL", kv.ErrInvalidArgument)
	// ErrInvalidID: Grant asked for an ID outside [1, MaxID].
	ErrInvalidID = fmt.Errorf("%w: lease: invalid ID", kv.ErrInvalidArgument)
	// ErrCorrupt: Restore found a record this version cannot read.
	ErrCorrupt = errors.New("lease: corrupt record")
)
