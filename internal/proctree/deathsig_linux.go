package proctree

import "syscall"

// WithParentDeath sets the signal a child gets when the thread that started it
// dies (Pdeathsig), so that browsers, Xvfb and drivers do not outlive a killed oracle.
func WithParentDeath(a *syscall.SysProcAttr, sig syscall.Signal) *syscall.SysProcAttr {
	a.Pdeathsig = sig
	return a
}
