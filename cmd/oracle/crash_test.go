package main

// A crash costs one case: kill -9 of a Chromium renderer, a Firefox content process
// or a page's Playwright driver (each the exact process the oracle started, found in
// its process tree) costs that engine at most one failed case, the next case is
// answered normally within a bounded time, and ping shows the restart. The oracles
// run with the default deadline: a Firefox relaunch (its browser connection is lost
// with its content process) took 9 to 18 s on a loaded machine.

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var playwrightEngines = []string{"chromium", "firefox"}

// cmdline is pid's argv, or nil when it is gone.
func cmdline(pid int) []string {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil || len(raw) == 0 {
		return nil
	}
	args := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
	if len(args) == 1 { // Chromium's zygote children rewrite argv into one spaced string
		args = strings.Fields(args[0])
	}
	return args
}

// renderers finds each engine's page processes below the oracle: Chromium's
// renderers (--type=renderer) and Firefox's tab content processes (-contentproc ... tab).
func renderers(oracle int) map[string][]int {
	found := map[string][]int{}
	for _, pid := range descendants(oracle) {
		args := cmdline(pid)
		if len(args) == 0 {
			continue
		}
		exe, rest := filepath.Base(args[0]), " "+strings.Join(args[1:], " ")+" "
		switch {
		case exe == "chromium" && strings.Contains(rest, " --type=renderer "):
			found["chromium"] = append(found["chromium"], pid)
		case exe == "firefox-esr" && strings.Contains(rest, " -contentproc ") && strings.Contains(rest, " tab "):
			found["firefox"] = append(found["firefox"], pid)
		}
	}
	return found
}

// cpuTicks is the CPU time pids have used so far, in clock ticks (utime + stime of
// /proc/<pid>/stat); a pid that is gone counts nothing.
func cpuTicks(pids []int) int64 {
	var total int64
	for _, pid := range pids {
		raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		if err != nil {
			continue
		}
		// The fields after the command name, which may itself hold spaces and ')'.
		f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
		if len(f) < 13 {
			continue
		}
		utime, _ := strconv.ParseInt(f[11], 10, 64)
		stime, _ := strconv.ParseInt(f[12], 10, 64)
		total += utime + stime
	}
	return total
}

// busyTicks is how much CPU an engine's page processes must burn (0.1 s at the usual
// 100 ticks/s) to count as running a busy case: far more than idle pages use in the
// second or so the wait takes.
const busyTicks = 10

// waitBusy waits until every engine's page processes in procs have used busyTicks of
// CPU since before (their cpuTicks then), i.e. a busy case's script is running in
// each: an event to wait for instead of a sleep that guesses when the case started.
// It gives up after within, saying so in the log, and the test goes on as it would
// have after a sleep.
func waitBusy(t *testing.T, procs map[string][]int, before map[string]int64, within time.Duration) {
	t.Helper()
	start := time.Now()
	for deadline := start.Add(within); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		busy := true
		for e, pids := range procs {
			busy = busy && cpuTicks(pids)-before[e] >= busyTicks
		}
		if busy {
			t.Logf("the busy case runs in %d engines after %s", len(procs), time.Since(start).Round(time.Millisecond))
			return
		}
	}
	t.Logf("the busy case did not show as CPU use in every engine within %s; going on", within)
}

// ticksOf is cpuTicks per engine.
func ticksOf(procs map[string][]int) map[string]int64 {
	out := map[string]int64{}
	for e, pids := range procs {
		out[e] = cpuTicks(pids)
	}
	return out
}

// drivers finds each engine's Playwright driver below the oracle: the node process
// running run-driver whose descendants include that engine's browser.
func drivers(oracle int) map[string]int {
	found := map[string]int{}
	for _, pid := range descendants(oracle) {
		args := cmdline(pid)
		if !strings.Contains(strings.Join(args, " "), "run-driver") {
			continue
		}
		for _, kid := range descendants(pid) {
			args := cmdline(kid)
			if len(args) == 0 {
				continue
			}
			switch filepath.Base(args[0]) {
			case "chromium":
				found["chromium"] = pid
			case "firefox-esr":
				found["firefox"] = pid
			}
		}
	}
	return found
}

func killAll(t *testing.T, pids ...int) {
	t.Helper()
	for _, pid := range pids {
		require.NoError(t, syscall.Kill(pid, syscall.SIGKILL), "kill %d", pid)
	}
}

// caseOK is a plain case every engine answers.
func caseOK() map[string]any {
	return map[string]any{"html": `<!doctype html><div style="width:3px;height:4px"></div>`}
}

// afterFault sends cases until every engine answered one (at most three tries), and
// returns how many cases each engine failed on the way; then two more cases must be
// answered by every engine at once, and each within bound.
func afterFault(t *testing.T, c *client, what string, bound time.Duration) map[string]int {
	t.Helper()
	failed := map[string]int{}
	recovered := map[string]bool{}
	for try := 0; try < 3 && len(recovered) < len(playwrightEngines); try++ {
		start := time.Now()
		resp := c.send(t, caseOK())
		assert.Less(t, time.Since(start), bound, "%s: case %d answered in bounded time", what, try)
		for e := range resp["dumps"].(map[string]any) {
			recovered[e] = true
		}
		errs, _ := resp["errors"].(map[string]any)
		for e, msg := range errs {
			if !recovered[e] {
				failed[e]++
			}
			t.Logf("%s, case %d: %s: %.300v", what, try, e, msg)
		}
	}
	assert.Len(t, recovered, len(playwrightEngines), "%s: every engine answers again", what)
	for i := 0; i < 2; i++ {
		start := time.Now()
		resp := c.send(t, caseOK())
		assert.Nil(t, resp["errors"], "%s: later case %d", what, i)
		assert.Less(t, time.Since(start), bound, "%s: later case %d answered in bounded time", what, i)
	}
	return failed
}

// logOnFailure shows the oracle's log when the test failed.
func logOnFailure(t *testing.T, c *client) {
	if t.Failed() {
		t.Logf("oracle stderr:\n%s", c.stderr.String()) // still being written
	}
}

func pingStates(t *testing.T, c *client) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for e, st := range c.send(t, map[string]any{"op": "ping"})["states"].(map[string]any) {
		out[e] = st.(map[string]any)
	}
	return out
}

func TestKilledRendererCostsAtMostOneCase(t *testing.T) {
	c := startOracle(t, "--pages=1", "--engines=chromium,firefox", "--log-level=warn", "--self-check=false") // not what it tests (docs/testing.md)
	defer c.close()
	defer logOnFailure(t, c)
	require.Nil(t, c.send(t, caseOK())["errors"])

	// Between cases: the page processes die while the engine is idle.
	procs := renderers(c.pid())
	require.NotEmpty(t, procs["chromium"], "found Chromium's renderer")
	require.NotEmpty(t, procs["firefox"], "found Firefox's content process")
	killAll(t, append(procs["chromium"], procs["firefox"]...)...)
	// ping says what the next case meets: not ready until the page was replaced.
	deadline := time.Now().Add(5 * time.Second)
	var states map[string]map[string]any
	for {
		states = pingStates(t, c)
		if states["chromium"]["state"] != "ready" || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("ping after the kill: %v", states)
	assert.NotEqual(t, "ready", states["chromium"]["state"], "chromium: ping does not call a crashed page ready")
	failed := afterFault(t, c, "killed between cases", 45*time.Second)
	for _, e := range playwrightEngines {
		assert.LessOrEqual(t, failed[e], 1, "%s: a killed page process costs at most one case", e)
	}
	states = pingStates(t, c)
	for _, e := range playwrightEngines {
		assert.Equal(t, "ready", states[e]["state"], e)
		assert.GreaterOrEqual(t, states[e]["restarts"], 1.0, "%s: ping counts the replacement", e)
	}

	// During a case: the case that crashed gets an error naming the crash.
	procs = renderers(c.pid())
	require.NotEmpty(t, procs["chromium"])
	require.NotEmpty(t, procs["firefox"])
	busy := map[string]any{"html": "<p>", "script": "const t0 = Date.now(); while (Date.now() - t0 < 4000) {}"}
	before := ticksOf(procs)
	answer := c.sendNext(t, busy)
	waitBusy(t, procs, before, 3*time.Second) // the 4 s busy script runs in both engines
	killAll(t, append(procs["chromium"], procs["firefox"]...)...)
	resp := c.await(t, answer, 2*time.Minute)
	errs, _ := resp["errors"].(map[string]any)
	t.Logf("the crashed case: %v", errs)
	for _, e := range playwrightEngines {
		msg, _ := errs[e].(string)
		assert.Contains(t, strings.ToLower(msg), "crash", "%s: the error names the crash", e)
	}
	failed = afterFault(t, c, "killed during a case", 45*time.Second)
	for _, e := range playwrightEngines {
		assert.Equal(t, 0, failed[e], "%s: the case after the crashed one is answered", e)
	}
	states = pingStates(t, c)
	for _, e := range playwrightEngines {
		assert.Equal(t, "ready", states[e]["state"], e)
		assert.GreaterOrEqual(t, states[e]["restarts"], 2.0, "%s: ping counts both replacements", e)
	}
}

func TestKilledPlaywrightDriverIsReplaced(t *testing.T) {
	// Both on Playwright's route: its subject is the Playwright driver, which the
	// default routes (the oracle's own BiDi and CDP clients) have none of.
	c := startOracle(t, "--pages=1", "--engines=chromium,firefox", "--firefox-route=playwright", "--chromium-route=playwright", "--log-level=warn", "--self-check=false") // not what it tests (docs/testing.md)
	defer c.close()
	defer logOnFailure(t, c)
	require.Nil(t, c.send(t, caseOK())["errors"])
	pids := drivers(c.pid())
	require.Len(t, pids, 2, "found each engine's driver: %v", pids)
	browsers := browserPIDs(t, c.pid())
	killAll(t, pids["chromium"], pids["firefox"])
	// ping says what the next case meets: a dead driver is not ready.
	deadline := time.Now().Add(5 * time.Second)
	var states map[string]map[string]any
	for {
		states = pingStates(t, c)
		if (states["chromium"]["state"] != "ready" && states["firefox"]["state"] != "ready") || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("ping after the kill: %v", states)
	for _, e := range playwrightEngines {
		assert.NotEqual(t, "ready", states[e]["state"], "%s: ping does not call a dead driver ready", e)
	}
	failed := afterFault(t, c, "killed driver", 45*time.Second)
	for _, e := range playwrightEngines {
		assert.LessOrEqual(t, failed[e], 1, "%s: a killed driver costs at most one case", e)
	}
	states = pingStates(t, c)
	now := drivers(c.pid())
	for _, e := range playwrightEngines {
		assert.Equal(t, "ready", states[e]["state"], e)
		assert.GreaterOrEqual(t, states[e]["restarts"], 1.0, "%s: ping counts the relaunch", e)
		assert.NotZero(t, now[e], "%s runs under a new driver", e)
		assert.NotEqual(t, pids[e], now[e], "%s runs under a new driver", e)
		// The browser of the dead driver does not live on, orphaned.
		assert.False(t, alive(browsers[e]), "%s: the old browser %d was ended", e, browsers[e])
	}
}
