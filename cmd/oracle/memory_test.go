package main

// --engine-memory: a case that allocates past its engine's bound costs that case in
// each engine (the kernel kills the engine's process at the cgroup's limit, and the
// crash path relaunches it), the next case is answered by every engine, and the
// oracle's cgroups are there while it runs and gone after it exits.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostileMemoryCase touches 128 MiB typed arrays until it dies or its deadline ends.
func hostileMemoryCase() map[string]any {
	return map[string]any{"html": `<!doctype html><p>x</p>`,
		"script": `const a = []; for (;;) a.push(new Float64Array(1 << 24).fill(1));`}
}

func TestEngineMemoryBoundCostsTheCaseAndARelaunch(t *testing.T) {
	t.Parallel() // own oracle, no tight timing (docs/testing.md)
	const limit = 600 << 20
	c := startOracle(t, "--store=off", "--pages=1", "--self-check=false", "--deadline=30s", "--engine-memory=600M")
	defer logOnFailure(t, c)
	defer c.close()

	mem, _ := c.send(t, map[string]any{"op": "ping"})["memory"].(map[string]any)
	require.NotNil(t, mem, "ping reports the memory bound")
	if p, _ := mem["problem"].(string); p != "" {
		t.Skipf("no memory cgroup on this machine: %s", p)
	}
	assert.EqualValues(t, limit, mem["limit"])
	cgroups := map[string]string{}
	for _, e := range engines {
		st, _ := mem["engines"].(map[string]any)[e].(map[string]any)
		require.NotNil(t, st, "%s has a memory cgroup", e)
		dir := st["cgroup"].(string)
		cgroups[e] = dir
		require.DirExists(t, dir)
		procs, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		require.NoError(t, err)
		assert.NotEmpty(t, strings.Fields(string(procs)), "%s: its processes are in its cgroup", e)
		assert.EqualValues(t, 0, st["oom_kills"], e)
	}

	resp := c.send(t, hostileMemoryCase())
	errs, _ := resp["errors"].(map[string]any)
	dumps, _ := resp["dumps"].(map[string]any)
	killed := map[string]bool{}
	for _, e := range engines {
		// An engine may refuse the allocation with a JS exception first: an error
		// either way, never a hung or dead oracle.
		_, answered := dumps[e]
		assert.False(t, answered, "%s: the hostile case has no dump", e)
		t.Logf("%s: %.300v", e, errs[e])
		msg, _ := errs[e].(string)
		killed[e] = strings.Contains(msg, "memory bound")
		assert.True(t, killed[e] || strings.Contains(msg, "RangeError"), "%s: the hostile case is an error that names the bound (or the engine's own refusal)", e)
	}
	ping := c.send(t, map[string]any{"op": "ping"})
	for _, e := range engines {
		st := ping["memory"].(map[string]any)["engines"].(map[string]any)[e].(map[string]any)
		t.Logf("%s after the hostile case: %v", e, st)
		if killed[e] {
			assert.Greater(t, st["oom_kills"].(float64), float64(0), "%s: the kernel killed a process at the bound", e)
		}
		assert.LessOrEqual(t, st["usage"].(float64), float64(limit), e)
	}

	// The innocent case after it: every engine answers (a relaunch may take a try).
	var answered map[string]any
	for try := 0; try < 3 && len(answered) < len(engines); try++ {
		resp := c.send(t, caseOK())
		answered, _ = resp["dumps"].(map[string]any)
		t.Logf("innocent case %d: errors %.300v", try, resp["errors"])
	}
	require.Len(t, answered, len(engines), "every engine answers the innocent case")
	raw, _ := json.Marshal(answered)
	var innocent map[string]dumpJSON
	require.NoError(t, json.Unmarshal(raw, &innocent))
	for e, d := range innocent {
		_, b, _ := d.node(t, "DIV", 0)
		assertRect(t, e, rect{8, 8, 3, 4}, b)
	}

	c.close()
	for e, dir := range cgroups {
		assert.NoDirExists(t, dir, "%s: its cgroup is removed at exit", e)
		assert.NoDirExists(t, filepath.Dir(dir), "the oracle's cgroup is removed at exit")
	}
}

// An address-space rlimit is no fallback: the browsers reserve more address space
// than any useful bound (checked here so docs/untrusted.md stays true).
func TestAddressSpaceRlimitBreaksChromium(t *testing.T) {
	t.Parallel() // own oracle, no tight timing (docs/testing.md)
	testutil.NeedsBrowsers(t)
	if _, err := os.Stat("/usr/bin/chromium"); err != nil {
		t.Skip("no /usr/bin/chromium")
	}
	c := exec.Command("/bin/sh", "-c", "ulimit -v 4194304; exec /usr/bin/chromium --headless --no-sandbox --dump-dom about:blank")
	start := time.Now()
	out, err := c.CombinedOutput()
	t.Logf("chromium under a 4 GiB RLIMIT_AS (%s): %v\n%.600s", time.Since(start), err, out)
	assert.Error(t, err, "Chromium does not start under a 4 GiB address-space limit")
}
