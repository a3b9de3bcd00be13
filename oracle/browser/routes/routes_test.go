package routes

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/browser/playwright"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A unit test of our own code (no browser): NoBundledBuilds reads the directory
// Playwright installs its builds in, and defers to the driver where
// PLAYWRIGHT_BROWSERS_PATH names another.
func TestNoBundledBuildsReadsPlaywrightsDirectory(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("PLAYWRIGHT_BROWSERS_PATH", "")
	dir, none := playwright.NoBundledBuilds()
	assert.Equal(t, filepath.Join(cache, "ms-playwright"), dir)
	assert.True(t, none)

	route, absent := WebKitRoute(testutil.Logger(t))
	assert.Equal(t, browser.RouteSystem, route, "no bundled WebKit can be installed")
	assert.Equal(t, dir, absent)

	t.Setenv("PLAYWRIGHT_BROWSERS_PATH", "0")
	_, none = playwright.NoBundledBuilds()
	assert.False(t, none, "with PLAYWRIGHT_BROWSERS_PATH set, only the driver knows")
}

// Where Playwright's builds directory does not exist, no bundled build can be, and
// the auto route takes the own route with no driver started to look: the page's
// BundledAbsent is that directory, not a build's path inside it (which only a
// driver knows). Against the real Firefox.
func TestTheAutoRouteStartsNoDriverOnlyToLook(t *testing.T) {
	testutil.NeedsBrowsers(t)
	dir, none := playwright.NoBundledBuilds()
	if !none {
		t.Skipf("Playwright's builds directory %q exists here: the driver is asked", dir)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e, err := Launch(ctx, browser.Firefox, browser.RouteAuto, "", browser.LaunchSettings{FirefoxRoute: browser.FirefoxRouteBiDi}, testutil.Logger(t))
	require.NoError(t, err)
	defer e.Close()
	assert.Contains(t, e.Route(), "WebDriver BiDi (oracle's own client)")
	assert.Equal(t, dir, browser.BundledAbsent(e))
}
