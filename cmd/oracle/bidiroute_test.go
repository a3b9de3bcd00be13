package main

// The network allowlist on the BiDi route (--firefox-route=bidi): the proxy prefs
// reach Firefox through the profile's user.js, not Playwright's launch options, so
// the route runs the allowlist tests (isolation_test.go) on an oracle of its own.

import (
	"testing"

	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/stretchr/testify/require"
)

func TestNetworkAllowlistHoldsOnTheBiDiRoute(t *testing.T) {
	testutil.NeedsBrowsers(t)
	c := startOracle(t, "--engines=firefox", "--pages=1", "--firefox-route=bidi", "--log-level=info")
	defer logOnFailure(t, c)
	ping := c.send(t, map[string]any{"op": "ping"})
	routes, _ := ping["routes"].(map[string]any)
	require.Contains(t, routes["firefox"], "oracle's own client", "the BiDi route serves firefox")
	geometryReachesNoOtherPort(t, c, 1)
	traceReachesNoOtherPortOrFile(t, c, 1)
}
