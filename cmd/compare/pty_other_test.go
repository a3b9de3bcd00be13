//go:build !linux

package main

import (
	"os"
	"testing"
)

// openPTY is Linux-only (pty_linux_test.go: /dev/ptmx ioctls).
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Skip("pseudo-terminal test is Linux-only")
	return nil, nil
}
