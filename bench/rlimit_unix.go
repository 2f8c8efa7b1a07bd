//go:build unix

package bench

import "syscall"

// raiseOpenFiles raises the soft limit on open files to at least want, and
// the hard limit too when the process may, so that ten thousand watch
// connections fit. It returns the soft limit in force.
func raiseOpenFiles(want uint64) (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	if lim.Cur >= want {
		return lim.Cur, nil
	}
	if lim.Max < want {
		raised := syscall.Rlimit{Cur: want, Max: want}
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised) == nil {
			return want, nil
		}
		// Not allowed to raise the hard limit: go as far as it.
		want = lim.Max
	}
	lim.Cur = want
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	return lim.Cur, nil
}
