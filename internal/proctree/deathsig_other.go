//go:build !linux

package proctree

import "syscall"

// WithParentDeath has no equivalent outside Linux: a child outlives a killed oracle
// there unless its process group is killed.
func WithParentDeath(a *syscall.SysProcAttr, sig syscall.Signal) *syscall.SysProcAttr {
	return a
}
