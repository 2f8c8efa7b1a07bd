package etcdtest

import (
	"os"
	"syscall"
)

// sysProcAttr puts a member in a process group of its own, so that a
// signal reaches everything it may start, and has the kernel kill it if
// the test process dies first: a test binary killed by its -timeout or by
// a signal leaves no etcd running.
//
// Pdeathsig fires when the thread that started the child exits, not the
// process; the Go runtime keeps its threads for the life of the process
// unless a goroutine exits while locked to one, which nothing here does.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// signalGroup sends sig to p's process group.
func signalGroup(p *os.Process, sig syscall.Signal) error {
	return syscall.Kill(-p.Pid, sig)
}
