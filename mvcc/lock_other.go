//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package mvcc

import "os"

// checkUnlocked leaves the lock to bbolt where flock is not available.
func checkUnlocked(*os.File) error { return nil }

// lockedError is ErrLocked: the holder cannot be told here.
func lockedError(*os.File) error { return ErrLocked }
