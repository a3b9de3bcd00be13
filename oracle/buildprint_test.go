package oracle

// A unit test of the build fingerprint alone (no browser: the "chromium" binary is a
// copy of /bin/true, never run). The warm start against the real engines is tested
// in cmd/oracle/warmstart_test.go.

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBuildPrintChangesWithTheFilesAndTheRoute(t *testing.T) {
	elf, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Skip("needs /bin/true as an ELF file to copy:", err)
	}
	exe := filepath.Join(t.TempDir(), "chromium")
	require.NoError(t, os.WriteFile(exe, elf, 0o755))
	cfg := Config{Browsers: browser.RouteSystem, ChromiumPath: exe}
	first, ok := buildPrint(cfg, browser.Chromium)
	require.True(t, ok)
	again, _ := buildPrint(cfg, browser.Chromium)
	assert.Equal(t, first, again, "nothing changed: the same fingerprint")

	other, ok := buildPrint(Config{Browsers: browser.RouteAuto, ChromiumPath: exe}, browser.Chromium)
	assert.True(t, ok)
	assert.NotEqual(t, first, other, "--browsers is part of it")

	fi, err := os.Stat(exe)
	require.NoError(t, err)
	time.Sleep(10 * time.Millisecond)
	require.NoError(t, os.Chtimes(exe, time.Now(), time.Now()))
	touched, _ := buildPrint(cfg, browser.Chromium)
	assert.NotEqual(t, first, touched, "a new mtime")
	require.NoError(t, os.Chtimes(exe, fi.ModTime(), fi.ModTime()))
	back, _ := buildPrint(cfg, browser.Chromium)
	assert.NotEqual(t, first, back, "mtime set back: the ctime still moved")

	// The same bytes under the same name and mtime, written anew: another inode.
	require.NoError(t, os.Remove(exe))
	require.NoError(t, os.WriteFile(exe, elf, 0o755))
	require.NoError(t, os.Chtimes(exe, fi.ModTime(), fi.ModTime()))
	rewritten, _ := buildPrint(cfg, browser.Chromium)
	assert.NotEqual(t, first, rewritten)

	script := filepath.Join(t.TempDir(), "chromium.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\nexec /usr/bin/chromium \"$@\"\n"), 0o755))
	_, ok = buildPrint(Config{Browsers: browser.RouteSystem, ChromiumPath: script}, browser.Chromium)
	assert.False(t, ok, "a script could run any build: no fingerprint")
	_, ok = buildPrint(Config{Browsers: browser.RoutePlaywright}, browser.Chromium)
	assert.False(t, ok, "Playwright's bundled builds are not fingerprinted")
	_, ok = buildPrint(Config{Browsers: browser.RouteSystem, ChromiumPath: filepath.Join(t.TempDir(), "missing")}, browser.Chromium)
	assert.False(t, ok, "a missing binary")
}
