//go:build !linux

package candidate

import (
	"errors"
	"os/exec"
	"time"
)

// procSys is a Proc off Linux: a process group, killed whole. A child that leaves
// the group (setsid) is out of its reach there.
type procSys struct{}

func (s *procSys) start(cmd *exec.Cmd, grace time.Duration) error {
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = grace // then the pipes are closed and the group killed
	}
	setGroup(cmd)
	return cmd.Start()
}

func (s *procSys) end(cmd *exec.Cmd) { killGroup(cmd) }

func (s *procSys) wait(cmd *exec.Cmd) error {
	err := cmd.Wait()
	killGroup(cmd) // whatever it left behind
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return &exitError{Status: ee.ProcessState.String()}
	}
	return err
}
