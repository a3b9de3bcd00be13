package host

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testEngines are the engines' names (browser.AllEngines): a cgroup per name.
var testEngines = []string{"chromium", "firefox", "webkit"}

// Pure: the cgroup directory from /proc/self/cgroup and mountinfo texts as seen on
// a cgroup v1 host with a v2 mount beside it, a pure v2 host, and a container whose
// mount shows a subtree.
func TestCgroupDir(t *testing.T) {
	hybrid := "4:memory:/process_api/c84\n1:cpu:/\n0::/\n"
	mi := "30 25 0:26 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n" +
		"33 25 0:29 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n" +
		"34 25 0:30 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
	dir, err := cgroupDir(hybrid, mi, "memory")
	require.NoError(t, err)
	assert.Equal(t, "/sys/fs/cgroup/memory/process_api/c84", dir)
	dir, err = cgroupDir(hybrid, mi, "")
	require.NoError(t, err)
	assert.Equal(t, "/sys/fs/cgroup/unified", dir)

	pure := "0::/system.slice/oracle.service\n"
	_, err = cgroupDir(pure, "29 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", "memory")
	assert.ErrorContains(t, err, "not in a memory hierarchy")
	dir, err = cgroupDir(pure, "29 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", "")
	require.NoError(t, err)
	assert.Equal(t, "/sys/fs/cgroup/system.slice/oracle.service", dir)

	dir, err = cgroupDir("0::/docker/abc/inner\n", "29 23 0:26 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", "")
	require.NoError(t, err)
	assert.Equal(t, "/sys/fs/cgroup/inner", dir)

	_, err = cgroupDir("0::/\n", "", "")
	assert.ErrorContains(t, err, "no cgroup2 mount")
}

// Pure: no limit means no cgroup and a problem that says it is off.
func TestMemoryBoundsOff(t *testing.T) {
	m := NewMemoryBounds(0, testEngines)
	assert.Contains(t, m.Problem, "off")
	assert.Empty(t, m.Procs("chromium"))
	assert.Zero(t, m.OOMKills("chromium"))
	assert.NoError(t, m.Close())
}

// Real cgroups (skipped without a writable memory controller): the bounds of this
// process exist with the limit, a dead oracle's leftover cgroups are removed, and
// Close removes this one's.
func TestMemoryBoundsMakeAndRemoveCgroups(t *testing.T) {
	probe := NewMemoryBounds(64<<20, []string{"chromium"})
	if probe.Problem != "" {
		t.Skip(probe.Problem)
	}
	require.NoError(t, probe.Close())
	parent := filepath.Dir(probe.Dir)
	stale := filepath.Join(parent, "layout-oracle-999999999")
	require.NoError(t, os.MkdirAll(filepath.Join(stale, "firefox"), 0o755))

	m := NewMemoryBounds(64<<20, testEngines)
	require.Empty(t, m.Problem)
	assert.NoDirExists(t, stale, "a dead oracle's cgroups are removed")
	for _, e := range testEngines {
		st, ok := m.State(e)
		require.True(t, ok, e)
		assert.EqualValues(t, 64<<20, st.Limit)
		limitFile := "memory.limit_in_bytes"
		if m.Kind == "cgroup v2" {
			limitFile = "memory.max"
		}
		b, err := os.ReadFile(filepath.Join(st.Cgroup, limitFile))
		require.NoError(t, err)
		assert.Equal(t, "67108864", strings.TrimSpace(string(b)), e)
	}
	require.NoError(t, m.Close())
	assert.NoDirExists(t, m.Dir)
}
