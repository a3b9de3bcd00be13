//go:build unix

package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A candidate that is not a regular file (here a named pipe, as with bash's
// <(...)) has no size to index by; it is spooled first, like stdin.
func TestCandidatePipe(t *testing.T) {
	p := filepath.Join(t.TempDir(), "candidate.fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	go func() {
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		f.WriteString(fixture(t, "candidate.ndjson"))
	}()
	code, stdout, stderr := runCmd(t, "", "--oracle", fixtures+"oracle.ndjson", "--candidate", p)
	assert.Equal(t, 1, code, "stderr: %s", stderr)
	assert.Contains(t, stdout, "FAIL          offset")
}
