package oracle

import (
	"testing"

	"github.com/layout-oracle/oracle/oracle/browser/playwright"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/remote"
	"github.com/layout-oracle/oracle/profiles"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Unit tests of the page counts and launch options of remote endpoints (no browser;
// the flags' parsing is oracle/remote's); the endpoints themselves are tested end to end in cmd/oracle/remote_test.go.

func TestEndpointPagesAndLocalPages(t *testing.T) {
	cfg := Config{Pages: 2, EnginePages: map[string]int{browser.Firefox: 1},
		Endpoints: []remote.Endpoint{{Engine: browser.Chromium, Protocol: remote.Playwright, URL: "ws://a:1/"},
			{Engine: browser.Chromium, Protocol: remote.Playwright, URL: "ws://b:1/", Pages: 3},
			{Engine: browser.Firefox, Protocol: remote.Playwright, URL: "ws://a:1/"}}}
	assert.Equal(t, 0, cfg.localPages(browser.Chromium), "an engine with endpoints has no local pages unless --pages names it")
	assert.Equal(t, 1, cfg.localPages(browser.Firefox), "--pages firefox=1 mixes one local page in")
	assert.Equal(t, 2, cfg.localPages(browser.WebKit))
	assert.Equal(t, 5, cfg.totalPages(browser.Chromium))
	assert.Equal(t, 3, cfg.totalPages(browser.Firefox))
	assert.Equal(t, []string{browser.WebKit, browser.Chromium, browser.Firefox}, withEndpointEngines([]string{browser.WebKit}, cfg))
	assert.Equal(t, 1, cfg.endpointPages(remote.Endpoint{Engine: browser.WebKit, Protocol: remote.WebDriver, URL: "http://h:4444"}),
		"a bare WebKitWebDriver holds one session")
}

// maxLaunchHeader bounds the x-playwright-launch-options header: a stock `playwright
// run-server` (Node's default 16 KiB for the request line and all headers) answered
// 431 to the 18 KB Firefox launch options of before; the margin is for the
// WebSocket handshake's other headers and a longer origin address.
const maxLaunchHeader = 12 << 10

// Every profile's launch options for a remote Playwright server, as sent, fit under
// a stock server's header limit (docs/remote.md, "The header limit").
func TestRemoteLaunchOptionsFitAStockServer(t *testing.T) {
	for _, name := range profiles.Names() {
		p, err := profiles.Lookup(name)
		require.NoError(t, err)
		cfg := Config{Profile: p, OriginListen: "203.0.113.200:65535", originHost: "203.0.113.200", originPort: 65535}
		for _, engine := range []string{browser.Chromium, browser.Firefox} {
			l, err := cfg.remoteLaunch(engine)
			require.NoError(t, err)
			l.URL = "ws://10.0.0.5:3000/"
			h, err := playwright.RemoteLaunchHeader(engine, l)
			require.NoError(t, err)
			t.Logf("profile %s, %s: launch options header %d bytes", name, engine, len(h))
			assert.Less(t, len(h), maxLaunchHeader, "profile %s, %s", name, engine)
		}
	}
}
