package candidate

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A command that kills its reaper (its shell's parent) keeps none of its children:
// the reaper is the first process of a PID namespace, which the kernel lets no
// process inside kill, and whose end ends every process in it. Before, the kill
// worked, the setsid sleep outlived the run, and the run, which had answered at
// once, was reported as a timeout. Real processes.
func TestACommandCannotKillItsReaper(t *testing.T) {
	if !pidNamespaces() {
		t.Skip("this process may not make a PID namespace (root with CAP_SYS_ADMIN)")
	}
	f := filepath.Join(t.TempDir(), "pid")
	c := Command{Cmd: `setsid sh -c 'cut -d" " -f4 /proc/self/stat > ` + f + `; exec sleep 60' & kill -9 $PPID; sleep 0.3; echo '{}'`,
		Timeout: 10 * time.Second, WaitDelay: 200 * time.Millisecond}
	start := time.Now()
	out, err := c.run(context.Background(), "")
	require.NoError(t, err)
	assert.Equal(t, "{}\n", string(out))
	assert.Less(t, time.Since(start), 5*time.Second, "not the timeout")
	assert.True(t, gone(readPID(t, f)), "the setsid sleep outlived the run")
}
