package wal

import (
	"os"
	"syscall"
)

// fdatasync flushes the file's data and the metadata needed to read it
// back (its size), not its times: one device flush for an append.
func fdatasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }
