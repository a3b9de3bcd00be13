//go:build unix && !linux

package candidate

import (
	"os/exec"
	"syscall"
)

// setGroup gives the candidate a process group of its own, so that killGroup
// reaches every process it started.
func setGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
