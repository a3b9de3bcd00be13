package playwright

// A unit test of the Playwright route's build files (no browser).

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/browser/cdp"
	"github.com/layout-oracle/oracle/oracle/buildprint"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What decides the system Chromium's program is fingerprinted:
// the CDP route runs Debian's browser itself (cdp.Executable), so what
// /etc/chromium.d holds cannot change its program or its fingerprint; the Playwright
// route still runs the wrapper script, and every file the script sources is part of
// that route's fingerprint. 05864a4 fingerprinted the script and
// /usr/lib/chromium/chromium on both routes and nothing the script sources: a file
// there that set LIBDIR ran another program under the recorded build.
func TestBuildPrintOfSystemChromiumCoversWhatDecidesItsProgram(t *testing.T) {
	if cdp.Executable("") != "/usr/lib/chromium/chromium" {
		t.Skip("needs Debian's Chromium")
	}
	dir := t.TempDir()
	saved := chromiumWrapperDir
	chromiumWrapperDir = dir
	t.Cleanup(func() { chromiumWrapperDir = saved })
	onCDP := buildprint.Launch{Engine: browser.Chromium, Browsers: browser.RouteSystem, Route: cdp.Route, Bundler: Route}
	pw := buildprint.Launch{Engine: browser.Chromium, Browsers: browser.RouteSystem, Route: Route, Bundler: Route}
	cdp1, ok := buildprint.Of(onCDP)
	require.True(t, ok)
	pw1, ok := buildprint.Of(pw)
	require.True(t, ok)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "libdir"), []byte("LIBDIR=/opt/other-chromium\n"), 0o644))
	cdp2, ok := buildprint.Of(onCDP)
	require.True(t, ok)
	assert.Equal(t, cdp1, cdp2, "the CDP route does not run the wrapper: its sources do not matter")
	pw2, ok := buildprint.Of(pw)
	require.True(t, ok)
	assert.NotEqual(t, pw1, pw2, "a file the wrapper sources is part of the Playwright route's fingerprint")

	// What the wrapper's loop skips is skipped here too.
	for _, skipped := range []string{"README", "libdir.dpkg-old", ".hidden"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, skipped), []byte("LIBDIR=/elsewhere\n"), 0o644))
	}
	pw3, _ := buildprint.Of(pw)
	assert.Equal(t, pw2, pw3)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "libdir"), []byte("LIBDIR=/opt/third-chromium\n"), 0o644))
	pw4, _ := buildprint.Of(pw)
	assert.NotEqual(t, pw2, pw4, "an edited source")
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	_, ok = buildprint.Of(pw)
	assert.False(t, ok, "something the wrapper would source that is not a file: no fingerprint")
}
