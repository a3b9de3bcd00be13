package main

// The network allowlist on the BiDi route (--firefox-route=bidi): the proxy prefs
// reach Firefox through the profile's user.js, not Playwright's launch options, so
// the route gets the allowlist tests of its own.

import (
	"strings"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNetworkAllowlistHoldsOnTheBiDiRoute(t *testing.T) {
	testutil.NeedsBrowsers(t)
	c := startOracle(t, "--engines=firefox", "--pages=1", "--firefox-route=bidi", "--log-level=info")
	defer logOnFailure(t, c)
	ping := c.send(t, map[string]any{"op": "ping"})
	routes, _ := ping["routes"].(map[string]any)
	require.Contains(t, routes["firefox"], "oracle's own client", "the BiDi route serves firefox")

	l := listenCounting(t)
	urls, ws, turn, stun := leakTargets(l)
	u := urls[0]
	html := `<img src="` + u + `m-img" width=3 height=2><iframe src="` + u + `m-iframe"></iframe>` +
		`<link rel=stylesheet href="` + u + `m-css"><script src="` + u + `m-js"></script>` +
		`<div style="background-image:url(` + u + `m-bg);width:3px;height:3px"></div>`
	script := `window.__log = []; const record = (k, v) => window.__log.push(k + '=' + v); const finish = () => {};` +
		leakScript(urls, ws, turn, stun, "net") + `;`
	resp := c.send(t, map[string]any{"html": html, "script": script})
	dumps, _ := resp["dumps"].(map[string]any)
	assert.Len(t, dumps, 1, "errors: %v", resp["errors"])

	for _, target := range urls {
		trace := strings.ReplaceAll(strings.ReplaceAll(leakScript([]string{target}, ws, turn, stun, "net"),
			"record(", "trace.value("), "finish()", "trace.done()")
		resp := c.send(t, map[string]any{"op": "trace", "script": trace})
		require.Nil(t, resp["errors"])
		tr := resp["traces"].(map[string]any)["firefox"].(map[string]any)
		for _, r := range records(tr) {
			assert.NotContains(t, r["value"], "leaked", "%s: a request reached the listener", target)
		}
	}
	c.send(t, caseOK())
	time.Sleep(time.Second)
	assert.Zero(t, l.tcp.Load(), "connections reached the listener on another loopback port")
	assert.Zero(t, l.pkts.Load(), "UDP packets reached the listener on another loopback port")
}
