//go:build unix

package main

import "syscall"

// raiseOpenFiles raises the soft limit on open files to the hard limit,
// as servers do (Go's runtime does it too, since 1.19), and returns it;
// 0 if it cannot be read.
func raiseOpenFiles() uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0
	}
	if lim.Cur < lim.Max {
		raised := lim
		raised.Cur = lim.Max
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised) == nil {
			lim = raised
		}
	}
	return lim.Cur
}
