package cli

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel send cmd SIGKILL when httpkv dies, so
// that a COMMAND run under a lock does not outlive the lease that holds
// it by more than the lease's TTL. (The signal follows the thread that
// started cmd; Go keeps its threads for the life of the process.)
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
