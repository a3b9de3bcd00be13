package candidate

import (
	"errors"
	"os/exec"
	"time"
)

// proc is a command started by Start: it and every process it starts, however it
// starts them (a setsid child, a double fork, a daemon), end together. On Linux
// the command runs under a reaper of its own (a copy of this binary, see
// reaper_linux.go), elsewhere in a process group of its own.
type proc struct {
	cmd *exec.Cmd
	sys procSys
}

// exitError is a command's own exit, when it was not 0: the text os.ProcessState
// gives ("exit status 3", "signal: killed").
type exitError struct{ Status string }

func (e *exitError) Error() string { return e.Status }

// start starts cmd, made by exec.Command or exec.CommandContext and not yet
// started, with no ExtraFiles or SysProcAttr of its own, so that Proc.End ends it
// and every process it started. Once the command itself exits, the processes it
// left behind have grace to exit by themselves (what they write in that time
// reaches cmd's Stdout and Stderr), then they are killed. cmd's context ending is
// End. Wait then waits for all of them.
func start(cmd *exec.Cmd, grace time.Duration) (*proc, error) {
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	if cmd.Process != nil || len(cmd.ExtraFiles) > 0 || cmd.SysProcAttr != nil {
		return nil, errors.New("candidate.Start: the command is started already, or has ExtraFiles or SysProcAttr")
	}
	p := &proc{cmd: cmd}
	if cmd.Cancel != nil { // made by CommandContext
		cmd.Cancel = func() error { p.end(); return nil }
	}
	if err := p.sys.start(cmd, grace); err != nil {
		return nil, err
	}
	return p, nil
}

// end ends the command and every process it started, at once; Wait says when they
// are gone. It may be called more than once, and from any goroutine.
func (p *proc) end() { p.sys.end(p.cmd) }

// wait waits until the command and every process it started are gone (or killed
// past its grace), and returns the command's own exit: nil for 0, an *exitError
// otherwise, exec.ErrWaitDelay when it exited 0 and its output was still held
// open past the caller's WaitDelay, or why it could not be run or waited for.
func (p *proc) wait() error { return p.sys.wait(p.cmd) }
