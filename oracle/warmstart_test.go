package oracle

import (
	"testing"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/browser/cdp"
	"github.com/layout-oracle/oracle/oracle/browser/playwright"
	"github.com/layout-oracle/oracle/oracle/browser/routes"
	"github.com/layout-oracle/oracle/oracle/buildprint"
	"github.com/layout-oracle/oracle/oracle/remote"
	"github.com/stretchr/testify/assert"
)

// The oracle fingerprints each engine's launch as its flags resolve it (a route
// named auto or not at all is the own client's, unless the profile emulates), and an
// engine with remote endpoints not at all. A unit test, no browser: the "chromium"
// binary is /bin/true, never run; the fingerprint itself is buildprint's tests.
func TestBuildPrintIsOfTheResolvedLaunch(t *testing.T) {
	const exe = "/bin/true"
	cfg := Config{Routes: routes.Table, Browsers: browser.RouteSystem, ChromiumPath: exe}
	got, ok := buildPrint(cfg, browser.Chromium)
	if !ok {
		t.Skip("needs /bin/true as an ELF file")
	}
	want, _ := buildprint.Of(buildprint.Launch{Engine: browser.Chromium, Browsers: browser.RouteSystem, Exe: exe, Route: cdp.Route, Bundler: playwright.Route})
	assert.Equal(t, want, got)
	pw, _ := buildprint.Of(buildprint.Launch{Engine: browser.Chromium, Browsers: browser.RouteSystem, Exe: exe, Route: playwright.Route, Bundler: playwright.Route})
	assert.NotEqual(t, pw, got, "the route is part of it")

	cfg.Endpoints = []remote.Endpoint{{Engine: browser.Chromium, URL: "ws://10.0.0.5:3000/", Protocol: remote.Playwright}}
	_, ok = buildPrint(cfg, browser.Chromium)
	assert.False(t, ok, "an engine with remote endpoints")
}
