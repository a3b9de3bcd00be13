package host

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Real /proc: a child this test starts is in its process tree, with its parent, its
// arguments and its own uid; a pid that is no process has no tree.
func TestProcessTreeFindsAChild(t *testing.T) {
	child := exec.Command("sleep", "30")
	require.NoError(t, child.Start())
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })

	tree := ProcessTree([]int{os.Getpid()})
	require.NotEmpty(t, tree)
	var found *ProcInfo
	root := false
	for i, p := range tree {
		root = root || p.PID == os.Getpid()
		if p.PID == child.Process.Pid {
			found = &tree[i]
		}
	}
	assert.True(t, root, "the root is in its tree")
	require.NotNil(t, found, "the child is in the tree")
	assert.Equal(t, os.Getpid(), found.PPID)
	assert.Equal(t, "sleep", found.Cmdline0)
	assert.True(t, found.HasArg("30"))
	assert.False(t, found.HasArg("--no-sandbox"))
	assert.Equal(t, os.Geteuid(), found.EUID)
	assert.NotEmpty(t, found.PidNS, "namespaces are read")

	assert.Empty(t, ProcessTree([]int{-1}))
}

// Pure: a child's output is logged line by line (partial writes joined) and only
// the last 12 are kept for an error message.
func TestTailLogKeepsTheLastLines(t *testing.T) {
	var logged strings.Builder
	tl := NewTailLog(zerolog.New(&logged).Level(zerolog.DebugLevel))
	assert.Equal(t, "(no output)", tl.Tail())
	var want []string
	for i := 1; i <= 20; i++ {
		line := fmt.Sprintf("line %d", i)
		_, err := tl.Write([]byte(line[:3]))
		require.NoError(t, err)
		_, err = tl.Write([]byte(line[3:] + "\r\n\n"))
		require.NoError(t, err)
		want = append(want, line)
	}
	assert.Equal(t, strings.Join(want[8:], " | "), tl.Tail())
	assert.Equal(t, 20, strings.Count(logged.String(), `"message":"line `), "every line is logged, blank ones not")
}

// Pure: extra's keys replace base's, in extra's order after base's others.
func TestWithEnvReplacesKeys(t *testing.T) {
	base := []string{"A=1", "HOME=/root", "B=2"}
	assert.Equal(t, base, WithEnv(base, nil))
	assert.Equal(t, []string{"A=1", "B=2", "HOME=/home/u", "C=3"}, WithEnv(base, []string{"HOME=/home/u", "C=3"}))
}
