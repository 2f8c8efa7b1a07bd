package mvcc

import (
	"errors"

	"github.com/httpkv/httpkv/kv"
)

// Sentinel errors of the storage engine itself. What a request can fail
// with (compacted, future revision, no space, ...) is kv's.
var (
	// ErrReadOnly: a write to a store opened with Options.ReadOnly.
	ErrReadOnly = errors.New("the store is opened read-only")
	// ErrCorrupt: the data file holds something this version cannot read,
	// or is shorter than its own meta page says.
	ErrCorrupt = errors.New("corrupt data file")
	// ErrLocked: another process (or another Store in this one) has the
	// data file open.
	ErrLocked = errors.New("the data file is locked by another process")
)

func invalidf(format string, args ...any) error { return kv.Invalidf(format, args...) }
