package buildprint

// A unit test of the build fingerprint alone (no browser: the "chromium" binary is a
// copy of /bin/true, never run). The warm start against the real engines is tested
// in cmd/oracle/warmstart_test.go.

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser/cdp"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// onCDP is a launch of Chromium on the CDP route, the one a Config naming no route
// resolves to.
func onCDP(browsers, exe string) Launch {
	return Launch{Engine: browser.Chromium, Browsers: browsers, Exe: exe, Route: browser.ChromiumRouteCDP}
}

func TestBuildPrintChangesWithTheFilesAndTheRoute(t *testing.T) {
	elf, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Skip("needs /bin/true as an ELF file to copy:", err)
	}
	exe := filepath.Join(t.TempDir(), "chromium")
	require.NoError(t, os.WriteFile(exe, elf, 0o755))
	l := onCDP(browser.RouteSystem, exe)
	first, ok := Of(l)
	require.True(t, ok)
	again, _ := Of(l)
	assert.Equal(t, first, again, "nothing changed: the same fingerprint")

	other, ok := Of(onCDP(browser.RouteAuto, exe))
	assert.True(t, ok)
	assert.NotEqual(t, first, other, "--browsers is part of it")

	fi, err := os.Stat(exe)
	require.NoError(t, err)
	time.Sleep(10 * time.Millisecond)
	require.NoError(t, os.Chtimes(exe, time.Now(), time.Now()))
	touched, _ := Of(l)
	assert.NotEqual(t, first, touched, "a new mtime")
	require.NoError(t, os.Chtimes(exe, fi.ModTime(), fi.ModTime()))
	back, _ := Of(l)
	assert.NotEqual(t, first, back, "mtime set back: the ctime still moved")

	// The same bytes under the same name and mtime, written anew: another inode.
	require.NoError(t, os.Remove(exe))
	require.NoError(t, os.WriteFile(exe, elf, 0o755))
	require.NoError(t, os.Chtimes(exe, fi.ModTime(), fi.ModTime()))
	rewritten, _ := Of(l)
	assert.NotEqual(t, first, rewritten)

	script := filepath.Join(t.TempDir(), "chromium.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\nexec /usr/bin/chromium \"$@\"\n"), 0o755))
	_, ok = Of(onCDP(browser.RouteSystem, script))
	assert.False(t, ok, "a script could run any build: no fingerprint")
	_, ok = Of(onCDP(browser.RoutePlaywright, ""))
	assert.False(t, ok, "Playwright's bundled builds are not fingerprinted")
	_, ok = Of(onCDP(browser.RouteSystem, filepath.Join(t.TempDir(), "missing")))
	assert.False(t, ok, "a missing binary")
}

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
	cdp := Launch{Engine: browser.Chromium, Browsers: browser.RouteSystem, Route: browser.ChromiumRouteCDP}
	pw := Launch{Engine: browser.Chromium, Browsers: browser.RouteSystem, Route: browser.ChromiumRoutePlaywright}
	cdp1, ok := Of(cdp)
	require.True(t, ok)
	pw1, ok := Of(pw)
	require.True(t, ok)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "libdir"), []byte("LIBDIR=/opt/other-chromium\n"), 0o644))
	cdp2, ok := Of(cdp)
	require.True(t, ok)
	assert.Equal(t, cdp1, cdp2, "the CDP route does not run the wrapper: its sources do not matter")
	pw2, ok := Of(pw)
	require.True(t, ok)
	assert.NotEqual(t, pw1, pw2, "a file the wrapper sources is part of the Playwright route's fingerprint")

	// What the wrapper's loop skips is skipped here too.
	for _, skipped := range []string{"README", "libdir.dpkg-old", ".hidden"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, skipped), []byte("LIBDIR=/elsewhere\n"), 0o644))
	}
	pw3, _ := Of(pw)
	assert.Equal(t, pw2, pw3)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "libdir"), []byte("LIBDIR=/opt/third-chromium\n"), 0o644))
	pw4, _ := Of(pw)
	assert.NotEqual(t, pw2, pw4, "an edited source")
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	_, ok = Of(pw)
	assert.False(t, ok, "something the wrapper would source that is not a file: no fingerprint")
}
