package playwright

import (
	"testing"

	"github.com/layout-oracle/oracle/oracle/browser"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A unit test of the launch options sent to a Playwright server (no browser).
func TestRemoteLaunchOptions(t *testing.T) {
	ep, launch, err := remoteLaunchOptions("ws://h:1/?launch-options="+
		`{"executablePath":null,"channel":"moz-firefox","timeout":5}&x=1`, browser.RouteSystem, "10.0.0.9:8000",
		Options{Engine: browser.Firefox, FirefoxPrefs: map[string]any{"a": 1}})
	require.NoError(t, err)
	assert.Equal(t, "ws://h:1/?x=1", ep, "the launch-options query is the oracle's to send, merged")
	_, hasExe := launch["executablePath"]
	assert.False(t, hasExe, "a null in the URL's launch-options removes the oracle's key")
	assert.Equal(t, float64(5), launch["timeout"])
	assert.Equal(t, map[string]any{"a": 1}, launch["firefoxUserPrefs"])
	assert.Equal(t, map[string]any{"server": "http://10.0.0.9:8000", "bypass": ""}, launch["proxy"])

	_, launch, err = remoteLaunchOptions("ws://h:1/", browser.RouteSystem, "", Options{Engine: browser.Chromium, Args: []string{"--x"}})
	require.NoError(t, err)
	assert.Equal(t, browser.SystemChromium, launch["executablePath"])
	assert.Contains(t, launch["args"], "--x")
	assert.NotContains(t, launch["args"], "--no-sandbox", "the server's host decides the sandbox")
	_, launch, _ = remoteLaunchOptions("ws://h:1/", browser.RoutePlaywright, "", Options{Engine: browser.Firefox})
	assert.Nil(t, launch["executablePath"])
	assert.Nil(t, launch["channel"], "the server's bundled Firefox (juggler), not stock Firefox over BiDi")

	_, _, err = remoteLaunchOptions("ws://h:1/?launch-options=nope", browser.RouteSystem, "", Options{Engine: browser.Chromium})
	assert.Error(t, err)
}
