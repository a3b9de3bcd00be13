package main

// Startup (#10): per-engine page counts, parallel startup, and serving before the
// slowest engine is ready. All against the real engines through the built binary.

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	oracleclient "github.com/layout-oracle/oracle/client"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// browserMains counts each engine's browser instances below the oracle: Chromium's
// and Firefox's main processes (not their children) and WebKit's MiniBrowser.
func browserMains(oracle int) map[string]int {
	n := map[string]int{}
	for _, pid := range descendants(oracle) {
		args := cmdline(pid)
		if len(args) == 0 {
			continue
		}
		exe, rest := filepath.Base(args[0]), " "+strings.Join(args[1:], " ")+" "
		switch {
		case exe == "chromium" && !strings.Contains(rest, " --type="):
			n["chromium"]++
		case exe == "firefox-esr" && !strings.Contains(rest, " -contentproc "):
			n["firefox"]++
		case exe == "MiniBrowser":
			n["webkit"]++
		}
	}
	return n
}

// Fails on the code where --pages took only a number (exit 2). Chromium and
// WebKit, not Firefox (the costliest launch): one engine named, one taking the
// default, on both launch routes (Playwright, WebDriver). The shared oracle runs
// every engine, Firefox included, on the default two pages.
func TestPerEnginePagesShowInPingAndInBrowserProcesses(t *testing.T) {
	t.Parallel() // own oracle, no tight timing (docs/testing.md)
	c := startOracle(t, "--engines=chromium,webkit", "--pages=chromium=1", "--self-check=false", "--log-level=warn")
	defer c.close()
	ping := c.send(t, map[string]any{"op": "ping"})
	// webkit is not named: it gets the default, 2.
	assert.Equal(t, map[string]any{"chromium": 1.0, "webkit": 2.0}, ping["pages"])
	states := ping["states"].(map[string]any)
	for e, want := range map[string]float64{"chromium": 1, "webkit": 2} {
		assert.Equal(t, want, states[e].(map[string]any)["pages"], "%s pages up", e)
	}
	assert.Equal(t, map[string]int{"chromium": 1, "webkit": 2}, browserMains(c.pid()))

	// Two cases at once (--parallel follows the largest count, 2): both answered by both.
	a := c.sendNext(t, map[string]any{"html": "<!doctype html><div style='width:7px;height:3px'></div>"})
	b := c.sendNext(t, map[string]any{"html": "<!doctype html><p>x</p>"})
	for _, ch := range []*oracleclient.Call{a, b} {
		resp := c.await(t, ch, 2*time.Minute)
		assert.Nil(t, resp["errors"])
		assert.Len(t, resp["dumps"], 2)
	}
}

func TestBadPagesIsAUsageError(t *testing.T) {
	t.Parallel() // own oracle, no tight timing (docs/testing.md)
	for _, v := range []string{"0", "firefox=0", "netscape=2", "firefox=2,firefox=3", "firefox", "x"} {
		c := startOracleNow(t, "--pages="+v)
		assert.Equal(t, 2, c.exitCode(t, 30*time.Second), "--pages=%s", v)
		assert.Contains(t, c.stderr.String(), "bad --pages", "--pages=%s", v)
	}
}

// Fails on the code that read stdin only once every engine had passed its
// self-check, so no ping could ever see an engine "starting"; and on the code whose
// ping at spawn listed only the engines serving (["chromium"]) while the cases sent
// with it were answered by all three, and gave no build before an engine served.
func TestPingIsAnsweredWhileTheSlowestEngineStarts(t *testing.T) {
	c := startOracleNow(t, "--pages=1", "--log-level=info")
	defer c.close()
	// Sent at once after start, before any engine is ready.
	first := c.sendNext(t, map[string]any{"op": "ping"})
	all := c.sendNext(t, map[string]any{"html": "<!doctype html><div style='width:10px;height:5px'></div>"})
	named := map[string]*oracleclient.Call{}
	for _, e := range engines {
		named[e] = c.sendNext(t, map[string]any{"html": "<!doctype html><p>x</p>", "engines": []string{e}})
	}
	ping := c.await(t, first, 3*time.Minute)
	require.Nil(t, ping["failed"], "every engine must come up for this test")
	assert.Equal(t, []any{"chromium", "firefox", "webkit"}, ping["engines"], "engines is who answers the cases sent with this ping")
	states := ping["states"].(map[string]any)
	versions := ping["versions"].(map[string]any)
	var starting []string
	for _, e := range engines {
		switch st := states[e].(map[string]any)["state"]; st {
		case "starting":
			starting = append(starting, e)
		case "ready":
			assert.NotEmpty(t, versions[e], "%s serves: its build is known", e)
		default:
			t.Errorf("%s: state %v at startup", e, st)
		}
	}
	require.NotEmpty(t, starting, "ping answered only once every engine was ready: %v", states)

	// Ping while the others start: the list does not change, and a starting engine's
	// build shows as soon as its pages report it, before its self-check ends.
	early := map[string]any{} // builds seen while an engine was starting
	for e, v := range versions {
		early[e] = v
	}
	seenStarting := map[string]bool{}
	deadline := time.Now().Add(3 * time.Minute)
	for p := ping; anyStarting(p); p = c.await(t, c.sendNext(t, map[string]any{"op": "ping"}), time.Minute) {
		require.True(t, time.Now().Before(deadline), "still starting after 3 minutes: %v", p["states"])
		assert.Equal(t, ping["engines"], p["engines"])
		require.Nil(t, p["failed"])
		for e, v := range p["versions"].(map[string]any) {
			if p["states"].(map[string]any)[e].(map[string]any)["state"] == "starting" {
				seenStarting[e] = true
			}
			if _, ok := early[e]; !ok {
				early[e] = v
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	assert.NotEmpty(t, seenStarting, "no ping gave a starting engine's build")
	last := c.send(t, map[string]any{"op": "ping"})
	assert.Equal(t, ping["engines"], last["engines"])
	for _, e := range engines {
		assert.Equal(t, "ready", last["states"].(map[string]any)[e].(map[string]any)["state"], e)
		v := last["versions"].(map[string]any)[e]
		assert.NotEmpty(t, v, e)
		assert.Equal(t, v, early[e], "%s: the build given while starting is the one that serves", e)
	}

	// The cases sent at once are answered by every engine, the starting ones included.
	resp := c.await(t, all, 3*time.Minute)
	assert.Nil(t, resp["errors"])
	assert.Len(t, resp["dumps"], 3)
	for e, ch := range named {
		resp := c.await(t, ch, 3*time.Minute)
		assert.Nil(t, resp["errors"], e)
		assert.Contains(t, resp["dumps"], e)
	}
	// The engines that were starting passed their self-check after ping was answered.
	log := c.stderr.String()
	for _, e := range starting {
		assert.Contains(t, log, `"engine":"`+e+`","checks":`, "%s's self-check ran", e)
	}
	assert.Contains(t, log, "startup complete")
}

// An oracle told to stop while engines are still launching closes what they launch:
// no browser started during startup outlives it.
func TestEOFDuringStartupLeavesNoBrowserBehind(t *testing.T) {
	c := startOracleNow(t, "--pages=1", "--log-level=info")
	ping := c.await(t, c.sendNext(t, map[string]any{"op": "ping"}), 3*time.Minute)
	if !anyStarting(ping) {
		t.Skip("every engine was ready by the first ping; nothing was starting to test")
	}
	// EOF once the first browser runs, while the others still start (as the SIGTERM
	// test below): with no Playwright driver started only to look for a bundled
	// build, the first ping can come before any process of an engine exists, and an
	// EOF then would leave nothing to test.
	for deadline := time.Now().Add(2 * time.Minute); len(browserMains(c.pid())) == 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	require.NotEmpty(t, browserMains(c.pid()), "no browser launched; stderr:\n%s", c.stderr.String())
	seen := map[int]bool{}
	for _, pid := range descendants(c.pid()) {
		seen[pid] = true
	}
	go c.oc.Close() // EOF; the loop below watches the exit
	// Keep collecting: browsers may still be spawned after EOF, until their launch ends.
	for done := false; !done; {
		select {
		case <-c.oc.Exited():
			done = true
		case <-time.After(100 * time.Millisecond):
			for _, pid := range descendants(c.pid()) {
				seen[pid] = true
			}
		}
	}
	code := c.exitCode(t, time.Second)
	assert.Equal(t, 0, code, c.stderr.String())
	require.NotEmpty(t, seen)
	deadline := time.Now().Add(5 * time.Second)
	for pid := range seen {
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		assert.False(t, alive(pid), "process %d (%v) outlived the oracle", pid, cmdline(pid))
	}
	assert.NotContains(t, c.stderr.String(), `"level":"error"`)
}

// A SIGTERM during startup: before, signals were caught only once an
// engine served, so this one took Go's default action (killed by the signal) and
// the browsers launched so far were left behind. Now it closes them and exits 143.
func TestSIGTERMDuringStartupLeavesNoBrowserBehind(t *testing.T) {
	c := startOracleNow(t, "--pages=1", "--log-level=info")
	defer c.close()
	seen := map[int]bool{}
	collect := func() {
		for _, pid := range descendants(c.pid()) {
			seen[pid] = true
		}
	}
	// Wait for the first browser to run, then signal while the others still start.
	deadline := time.Now().Add(2 * time.Minute)
	for len(browserMains(c.pid())) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	require.NotEmpty(t, browserMains(c.pid()), "no browser launched; stderr:\n%s", c.stderr.String())
	collect()
	// The oracle serves stdio at once, while its engines start ("serving on stdio"
	// comes first): startup is over when every engine serves or failed.
	if strings.Contains(c.stderr.String(), "startup complete") {
		t.Skip("every engine already served when the first browser was seen; nothing to test")
	}
	require.NoError(t, syscall.Kill(c.pid(), syscall.SIGTERM))
	sent := time.Now()
	for done := false; !done; {
		select {
		case <-c.oc.Exited():
			done = true
		case <-time.After(100 * time.Millisecond):
			collect()
		}
	}
	t.Logf("exited %s after SIGTERM", time.Since(sent).Round(time.Millisecond))
	code := c.exitCode(t, time.Second)
	assert.Equal(t, 128+int(syscall.SIGTERM), code, c.stderr.String())
	assert.Contains(t, c.stderr.String(), "closing browsers", "the signal's handler ran")
	deadline = time.Now().Add(5 * time.Second)
	for pid := range seen {
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		assert.False(t, alive(pid), "process %d (%v) outlived the oracle", pid, cmdline(pid))
	}
	assert.NotContains(t, c.stderr.String(), `"level":"error"`)
}
