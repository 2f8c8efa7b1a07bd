//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package mvcc

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// checkUnlocked fails with ErrLocked when another open of the file holds
// bbolt's exclusive lock on it. It takes a shared lock for a moment,
// which conflicts with that one only, and releases it at once.
func checkUnlocked(f *os.File) error {
	fd := int(f.Fd())
	err := syscall.Flock(fd, syscall.LOCK_SH|syscall.LOCK_NB)
	if err == nil {
		return syscall.Flock(fd, syscall.LOCK_UN)
	}
	if !errors.Is(err, syscall.EWOULDBLOCK) {
		return fmt.Errorf("mvcc: lock: %w", err)
	}
	return lockedError(f)
}

// lockedError is ErrLocked, with the holder's process ID when it can be
// found.
func lockedError(f *os.File) error {
	st, err := f.Stat()
	if err != nil {
		return ErrLocked
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return ErrLocked
	}
	if pid := lockHolder(uint64(sys.Dev), uint64(sys.Ino)); pid > 0 {
		return fmt.Errorf("%w (pid %d)", ErrLocked, pid)
	}
	return ErrLocked
}
