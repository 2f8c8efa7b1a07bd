//go:build !linux

package etcdtest

import (
	"os"
	"syscall"
)

// sysProcAttr has nothing to add where process groups and Pdeathsig are
// not Linux's: the cleanup's kill is then the only guard against leaks.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// signalGroup sends sig to p.
func signalGroup(p *os.Process, sig syscall.Signal) error { return p.Signal(sig) }
