//go:build unix

package client

import (
	"os/exec"
	"syscall"
)

// setGroup gives the oracle a process group of its own, so that Kill reaches the
// browsers under it too.
func setGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

func killGroup(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
