package browser

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A unit test of the launch options sent to a Playwright server (no browser).
func TestRemoteLaunchOptions(t *testing.T) {
	ep, launch, err := remoteLaunchOptions("ws://h:1/?launch-options="+
		`{"executablePath":null,"channel":"moz-firefox","timeout":5}&x=1`, RouteSystem, "10.0.0.9:8000",
		PlaywrightOptions{Engine: Firefox, FirefoxPrefs: map[string]any{"a": 1}})
	require.NoError(t, err)
	assert.Equal(t, "ws://h:1/?x=1", ep, "the launch-options query is the oracle's to send, merged")
	_, hasExe := launch["executablePath"]
	assert.False(t, hasExe, "a null in the URL's launch-options removes the oracle's key")
	assert.Equal(t, float64(5), launch["timeout"])
	assert.Equal(t, map[string]any{"a": 1}, launch["firefoxUserPrefs"])
	assert.Equal(t, map[string]any{"server": "http://10.0.0.9:8000", "bypass": ""}, launch["proxy"])

	_, launch, err = remoteLaunchOptions("ws://h:1/", RouteSystem, "", PlaywrightOptions{Engine: Chromium, Args: []string{"--x"}})
	require.NoError(t, err)
	assert.Equal(t, SystemChromium, launch["executablePath"])
	assert.Contains(t, launch["args"], "--x")
	assert.NotContains(t, launch["args"], "--no-sandbox", "the server's host decides the sandbox")
	_, launch, _ = remoteLaunchOptions("ws://h:1/", RoutePlaywright, "", PlaywrightOptions{Engine: Firefox})
	assert.Nil(t, launch["executablePath"])
	assert.Nil(t, launch["channel"], "the server's bundled Firefox (juggler), not stock Firefox over BiDi")

	_, _, err = remoteLaunchOptions("ws://h:1/?launch-options=nope", RouteSystem, "", PlaywrightOptions{Engine: Chromium})
	assert.Error(t, err)
}
