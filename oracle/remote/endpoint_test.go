package remote

import (
	"testing"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A unit test of the flags' parsing (no browser); the endpoints themselves are
// tested end to end in cmd/oracle/remote_test.go.
func TestParseEndpoint(t *testing.T) {
	ep, err := ParseEndpoint(Playwright, "firefox:3=ws://10.0.0.5:3000/pw?x=1")
	require.NoError(t, err)
	assert.Equal(t, Endpoint{Engine: browser.Firefox, URL: "ws://10.0.0.5:3000/pw?x=1", Protocol: Playwright, Pages: 3}, ep)
	ep, err = ParseEndpoint(WebDriver, "webkit=http://h:4444")
	require.NoError(t, err)
	assert.Equal(t, 0, ep.Pages)

	for _, bad := range []struct{ proto, s string }{
		{Playwright, "webkit=ws://h:1/"},    // stock WebKitGTK is not on the Playwright route
		{Playwright, "chromium=http://h:1"}, // not a WebSocket
		{Playwright, "chromium"},
		{Playwright, "chromium:0=ws://h:1/"},
		{Playwright, "chromium:x=ws://h:1/"},
		{WebDriver, "chromium=http://h:1"},
		{WebDriver, "webkit=ws://h:1"},
		{WebDriver, "webkit=nohost"},
		{"grid", "webkit=http://h:1"},
	} {
		_, err := ParseEndpoint(bad.proto, bad.s)
		assert.Error(t, err, "%s %s", bad.proto, bad.s)
	}
}
