//go:build !linux

package testutil

import (
	"os"
	"testing"
)

// OpenPTY is Linux-only (pty_linux.go: /dev/ptmx ioctls).
func OpenPTY(t *testing.T) (master, slave *os.File) {
	t.Skip("pseudo-terminal test is Linux-only")
	return nil, nil
}
