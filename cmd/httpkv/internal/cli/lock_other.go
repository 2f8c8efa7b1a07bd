//go:build !linux

package cli

import "os/exec"

// dieWithParent does nothing where the kernel has no parent-death
// signal: COMMAND outlives httpkv if httpkv is killed.
func dieWithParent(*exec.Cmd) {}
