// Package buildprint fingerprints the files a local launch of an engine will run,
// without running it, so that the oracle knows an engine's build before its browser
// is up: the store records, per fingerprint, the build the last live launch on those
// files reported (docs/store.md, "Warm starts"). It knows nothing of the store or the
// oracle: package oracle looks the fingerprint up and records it.
package buildprint

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/layout-oracle/oracle/oracle/browser/cdp"
	"github.com/layout-oracle/oracle/oracle/browser/webdriver"

	"github.com/layout-oracle/oracle/oracle/browser"
)

// chromiumLibDir is where Debian's /usr/bin/chromium wrapper script runs the browser
// from ($LIBDIR/chromium).
const chromiumLibDir = "/usr/lib/chromium"

// Launch is what decides the build a local launch of one engine runs.
type Launch struct {
	Engine   string // browser.Chromium, browser.Firefox or browser.WebKit
	Browsers string // --browsers: browser.RouteSystem, browser.RoutePlaywright or browser.RouteAuto
	Exe      string // the binary override (--chromium, --firefox, --webkit-driver); "" for the system build
	// Route is the engine's route as the launch resolves it (--chromium-route,
	// --firefox-route: auto already decided); "" for WebKit.
	Route string
}

// Of fingerprints what l runs, without running it: how the route and binary are
// chosen (--browsers, the binary override, and for the auto route what decides
// where Playwright's bundled build would be), and the identity of every file the
// build's version comes from (path, resolved path, device, inode, size, mtime and
// ctime). ok is false where no sound fingerprint is known: Playwright's bundled
// builds (--browsers=playwright), a binary that is not an ELF executable (a script
// could run anything), missing files, and any system but Linux.
func Of(l Launch) (print string, ok bool) {
	if l.Browsers == browser.RoutePlaywright {
		return "", false
	}
	name, exe := l.Engine, l.Exe
	var b strings.Builder
	fmt.Fprintf(&b, "engine=%s\nbrowsers=%s\nexe=%s\n", name, l.Browsers, exe)
	if name == browser.Firefox && l.Route != browser.FirefoxRoutePlaywright {
		fmt.Fprintf(&b, "firefox-route=%s\n", l.Route) // the route is part of what is recorded
	}
	if name == browser.Chromium && l.Route != browser.ChromiumRoutePlaywright {
		fmt.Fprintf(&b, "chromium-route=%s\n", l.Route)
	}
	if l.Browsers == browser.RouteAuto && exe == "" {
		// Where the driver looks for a bundled build (the record's Absent path) follows
		// from the driver's version, its environment and the host platform.
		fmt.Fprintf(&b, "driver=%s\n", playwrightVersion())
		for _, v := range []string{"PLAYWRIGHT_BROWSERS_PATH", "PLAYWRIGHT_DRIVER_PATH", "XDG_CACHE_HOME", "HOME"} {
			fmt.Fprintf(&b, "%s=%q\n", v, os.Getenv(v))
		}
		if !fileLine(&b, "/etc/os-release") {
			return "", false
		}
	}
	var files []string
	switch name {
	case browser.Chromium:
		switch {
		case l.Route == browser.ChromiumRouteCDP:
			// The CDP route runs Debian's browser itself, never its wrapper script.
			if run := cdp.Executable(exe); isELF(run) {
				files = []string{run}
			} else {
				return "", false
			}
		case exe == "" || exe == browser.SystemChromium:
			// Debian's wrapper script runs $LIBDIR/chromium after sourcing every file of
			// /etc/chromium.d, any of which may set LIBDIR: all are fingerprinted.
			sourced, ok := chromiumWrapperSources()
			if !ok {
				return "", false
			}
			files = append([]string{browser.SystemChromium, filepath.Join(chromiumLibDir, "chromium")}, sourced...)
		case isELF(exe):
			files = []string{exe}
		default:
			return "", false
		}
	case browser.Firefox:
		exe = cmp.Or(exe, browser.SystemFirefox)
		real, err := filepath.EvalSymlinks(exe)
		if err != nil || !isELF(real) {
			return "", false
		}
		// The launcher loads libxul.so beside it; the version is read from
		// application.ini and libxul.
		dir := filepath.Dir(real)
		files = []string{exe, filepath.Join(dir, "libxul.so"), filepath.Join(dir, "application.ini")}
	case browser.WebKit:
		driver := cmp.Or(exe, webdriver.DefaultWebKitWebDriver)
		if !isELF(driver) {
			return "", false
		}
		// The driver starts MiniBrowser, which reports the build of the
		// libwebkit2gtk (and its JavaScriptCore) it loads from its library directory.
		lib := filepath.Dir(filepath.Dir(webdriver.DefaultMiniBrowser))
		files = []string{driver, webdriver.DefaultMiniBrowser,
			filepath.Join(lib, "libwebkit2gtk-4.1.so.0"), filepath.Join(lib, "libjavascriptcoregtk-4.1.so.0")}
	default:
		return "", false
	}
	for _, f := range files {
		if !fileLine(&b, f) {
			return "", false
		}
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:]), true
}

// chromiumWrapperDir holds the files Debian's /usr/bin/chromium sources before it
// runs $LIBDIR/chromium (a variable for the tests).
var chromiumWrapperDir = "/etc/chromium.d"

// chromiumWrapperSources are the files the wrapper sources, as its loop picks them
// (every file of chromiumWrapperDir but README and dpkg's leftovers), in its order.
func chromiumWrapperSources() ([]string, bool) {
	entries, err := os.ReadDir(chromiumWrapperDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, true
	}
	if err != nil {
		return nil, false
	}
	var files []string
	for _, e := range entries {
		if e.Name() == "README" || strings.Contains(e.Name(), ".dpkg") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		files = append(files, filepath.Join(chromiumWrapperDir, e.Name()))
	}
	return files, true
}

// fileLine writes path's identity: the path, where its symlinks lead, and that
// file's device, inode, size, mtime and ctime. Replacing or editing the file (a
// package upgrade, a copy over it, a touch) changes one of them; ctime cannot be set
// back by a user.
func fileLine(b *strings.Builder, path string) bool {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return false
	}
	id, ok := fileIdentity(real)
	if !ok {
		return false
	}
	fmt.Fprintf(b, "file=%s real=%s %s\n", path, real, id)
	return true
}

// isELF says whether path (after symlinks) is an ELF file, not a script.
func isELF(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	magic := make([]byte, 4)
	_, err = f.Read(magic)
	return err == nil && string(magic) == "\x7fELF"
}

// playwrightVersion is the playwright-go module this oracle was built with: it pins
// the driver, which decides where bundled builds are looked for.
func playwrightVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if strings.HasSuffix(m.Path, "/playwright-go") {
				return m.Path + "@" + m.Version
			}
		}
	}
	return "unknown"
}
