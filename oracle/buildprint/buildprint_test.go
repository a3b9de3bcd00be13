package buildprint

// A unit test of the build fingerprint alone (no browser: the "chromium" binary is a
// copy of /bin/true, never run). The warm start against the real engines is tested
// in cmd/oracle/warmstart_test.go.

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/browser/cdp"
	"github.com/layout-oracle/oracle/oracle/browser/playwright"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// onCDP is a launch of Chromium on the CDP route, the one a Config naming no route
// resolves to.
func onCDP(browsers, exe string) Launch {
	return Launch{Engine: browser.Chromium, Browsers: browsers, Exe: exe, Route: cdp.Route, Bundler: playwright.Route}
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
