package main

// The startup self-check against a really broken route, no test hook: Chromium
// launched through a wrapper that sends every request, loopback included, to a proxy
// port nothing listens on. It launches and passes the viewport check (about:blank
// needs no network), answers geometry and reflection (setContent, no network), but
// cannot load a trace page from the oracle's localhost origin.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/layout-oracle/oracle/probes"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func deadProxyChromium(t *testing.T) string {
	t.Helper()
	p := filepath.Join(testutil.BrowserDir(t), "chromium-dead-proxy")
	// After the oracle's own arguments: Chromium takes the last of a repeated switch,
	// and the oracle points every engine at its origin as a proxy (network allowlist).
	script := "#!/bin/sh\nexec /usr/bin/chromium \"$@\" --proxy-server=http://127.0.0.1:9 '--proxy-bypass-list=<-loopback>'\n"
	require.NoError(t, os.WriteFile(p, []byte(script), 0o755))
	return p
}

func TestSelfCheckTakesAFailingEngineOutOfService(t *testing.T) {
	t.Parallel() // own oracle, no tight timing (docs/testing.md)
	wrapper := deadProxyChromium(t)
	// WebKit, not Firefox, is the engine that serves on: any other engine shows it, and
	// WebKit's launch costs a fraction of Firefox's.
	c := startOracle(t, "--engines=chromium,webkit", "--pages=1", "--log-level=info", "--chromium-path="+wrapper)
	exited := false
	defer func() {
		if !exited { // close after exitCode would wait for an exit already seen
			c.close()
		}
	}()

	ping := c.send(t, map[string]any{"op": "ping"})
	assert.Equal(t, []any{"webkit"}, ping["engines"], "chromium must not serve")
	failed, _ := ping["failed"].(map[string]any)
	why, _ := failed["chromium"].(string)
	assert.True(t, strings.HasPrefix(why, "failed self-check: microtask-order: "), why)
	assert.Contains(t, why, "ERR_PROXY_CONNECTION_FAILED")
	assert.NotContains(t, why, "box-model", "geometry works on this route")
	assert.NotContains(t, why, "input-value-reflection", "reflection works on this route")
	assert.NotContains(t, ping["states"], "chromium")

	// The rest keep serving; a request naming the failed engine gets the protocol's
	// per-engine "engine not launched" (ping says why).
	resp := c.send(t, map[string]any{"html": "<div style='width:10px;height:10px'></div>", "engines": []string{"chromium", "webkit"}})
	assert.Equal(t, map[string]any{"chromium": "engine not launched"}, resp["errors"])
	assert.Contains(t, resp["dumps"], "webkit")

	// The failed engine's browser was closed, not left running beside the others.
	pids := browserPIDs(t, c.pid())
	assert.NotContains(t, pids, "chromium", "a chromium browser is still running after failing the self-check")
	assert.Contains(t, pids, "webkit")

	exited = true
	assert.Equal(t, 0, c.exitCode(t, 30*time.Second))
	log := c.stderr.String()
	assert.Contains(t, log, `"message":"self-check"`)
	assert.Contains(t, log, `"passed":["webkit"]`)
}

func TestSelfCheckOffServesTheBrokenRoute(t *testing.T) {
	t.Parallel() // own oracle, no tight timing (docs/testing.md)
	// --self-check=false: the same route serves, and fails exactly where the check
	// said it would, so the check caught a real fault rather than inventing one.
	c := startOracle(t, "--engines=chromium", "--pages=1", "--log-level=warn", "--self-check=false",
		"--chromium-path="+deadProxyChromium(t))
	defer c.close()
	ping := c.send(t, map[string]any{"op": "ping"})
	assert.Equal(t, []any{"chromium"}, ping["engines"])
	assert.Contains(t, ping["routes"].(map[string]any)["chromium"], "chromium-dead-proxy")

	geo := c.send(t, map[string]any{"html": "<p>x</p>"})
	assert.Nil(t, geo["errors"])
	tr := c.send(t, map[string]any{"op": "trace", "script": "trace.done()"})
	errs, _ := tr["errors"].(map[string]any)
	assert.Contains(t, errs["chromium"], "ERR_PROXY_CONNECTION_FAILED")
}

func TestSelfCheckPassesOnTheRealEngines(t *testing.T) {
	// The shared oracle ran the self-check at startup: every engine passed it.
	ping := shared.get(t).send(t, map[string]any{"op": "ping"})
	assert.Len(t, ping["engines"], 3)
	assert.Nil(t, ping["failed"])
}

// Fails before the fix: the second start's self-check was answered from the answers
// the first start's self-check stored (ping counted a hit per check before any
// request), so a broken engine of the same build would have passed it.
func TestSelfCheckRunsLiveOnAWarmStore(t *testing.T) {
	t.Parallel() // own oracle, no tight timing (docs/testing.md)
	path := filepath.Join(t.TempDir(), "store.sqlite")
	checks := len(probes.SelfChecks())
	for run := 1; run <= 2; run++ {
		// Debug level: every case a browser served logs "case served".
		c := startOracle(t, "--store", path, "--engines=chromium", "--pages=1", "--log-level=debug")
		ping := c.send(t, map[string]any{"op": "ping"})
		require.Equal(t, []any{"chromium"}, ping["engines"], "run %d", run)
		st, _ := ping["store"].(map[string]any)
		require.NotNil(t, st, "run %d: ping has no store", run)
		assert.Equal(t, 0.0, st["hits"], "run %d: the self-check was answered from the store", run)
		assert.Equal(t, 0.0, st["misses"], "run %d: the self-check looked in the store", run)
		resp := c.send(t, map[string]any{"id": "warm", "html": "<!doctype html><p>warm</p>"})
		require.Nil(t, resp["errors"])
		if run == 1 {
			assert.Nil(t, resp["stored"])
		} else {
			assert.Equal(t, []any{"chromium"}, resp["stored"], "the store is warm")
		}
		require.Equal(t, 0, c.exitCode(t, time.Minute))
		log := c.stderr.String()
		assert.Contains(t, log, `"engine":"chromium","checks":`, "run %d: the self-check passed", run)
		live := checks // every check ran in the browser
		if run == 1 {
			live++ // and the case
		}
		assert.Equal(t, live, engineCases(log), "run %d: cases a browser served", run)
	}
}
