package host

import (
	"os/exec"
	"syscall"
	"time"
)

// Group is a started process that leads a process group of its own (Setpgid), and is
// reaped in the background: the browsers of the own-client routes, WebKitWebDriver
// and Xvfb.
type Group struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed when the process has been reaped
}

// Reap takes cmd, started with Setpgid, and waits for it in the background.
func Reap(cmd *exec.Cmd) *Group {
	g := &Group{cmd: cmd, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(g.exited)
	}()
	return g
}

// PID is the group's leader, the root of its tree.
func (g *Group) PID() int { return g.cmd.Process.Pid }

// Exited is closed once the leader has been reaped.
func (g *Group) Exited() <-chan struct{} { return g.exited }

// Alive says whether the leader has not exited.
func (g *Group) Alive() bool {
	select {
	case <-g.exited:
		return false
	default:
		return true
	}
}

// Signal sends sig to the whole group and waits up to wait for the leader to be
// reaped; false when it was not by then.
func (g *Group) Signal(sig syscall.Signal, wait time.Duration) bool {
	killGroup(g.PID(), sig)
	select {
	case <-g.exited:
		return true
	case <-time.After(wait):
		return false
	}
}

// killGroup signals the process group led by pid (every process started with
// Setpgid, and its descendants that did not leave the group).
func killGroup(pid int, sig syscall.Signal) {
	if pid > 0 {
		_ = syscall.Kill(-pid, sig)
	}
}
