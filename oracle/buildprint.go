package oracle

// Warm starts (docs/store.md, "Warm starts"): an engine's build is known before its
// browser is up, from a fingerprint of the files the launch will run, recorded in the
// store with the build the last live launch on those files reported. Stored answers
// of that build are then served while the engine still launches.

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/layout-oracle/oracle/oracle/browser/cdp"
	"github.com/layout-oracle/oracle/oracle/browser/webdriver"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/store"
)

// chromiumLibDir is where Debian's /usr/bin/chromium wrapper script runs the browser
// from ($LIBDIR/chromium).
const chromiumLibDir = "/usr/lib/chromium"

// buildPrint fingerprints what name's local launch under cfg runs, without running
// it: how the route and binary are chosen (--browsers, the binary override, and for
// the auto route what decides where Playwright's bundled build would be), and the
// identity of every file the build's version comes from (path, resolved path,
// device, inode, size, mtime and ctime). ok is false where no sound fingerprint is
// known: remote endpoints, Playwright's bundled builds (--browsers=playwright), a
// binary that is not an ELF executable (a script could run anything), missing files.
func buildPrint(cfg Config, name string) (print string, ok bool) {
	if len(cfg.endpointsFor(name)) > 0 || cfg.Browsers == browser.RoutePlaywright {
		return "", false
	}
	exe := cfg.executablePath(name)
	var b strings.Builder
	fmt.Fprintf(&b, "engine=%s\nbrowsers=%s\nexe=%s\n", name, cfg.Browsers, exe)
	if r := cfg.firefoxRoute(); name == browser.Firefox && r != browser.FirefoxRoutePlaywright {
		fmt.Fprintf(&b, "firefox-route=%s\n", r) // the route is part of what is recorded
	}
	if r := cfg.chromiumRoute(); name == browser.Chromium && r != browser.ChromiumRoutePlaywright {
		fmt.Fprintf(&b, "chromium-route=%s\n", r)
	}
	if cfg.Browsers == browser.RouteAuto && exe == "" {
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
		case cfg.chromiumRoute() == browser.ChromiumRouteCDP:
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

// predictBuilds looks up, for every local engine, the build recorded for its
// fingerprint; a record whose Absent path now exists (a bundled build was installed:
// the auto route would launch it) is not used. Run before any engine starts.
func (o *Oracle) predictBuilds(ctx context.Context, cfg Config, names []string) {
	if o.store == nil {
		return
	}
	for _, name := range names {
		fp, ok := buildPrint(cfg, name)
		if !ok {
			o.log.Debug().Str("engine", name).Msg("no build fingerprint for this route: stored answers wait for the live engine")
			continue
		}
		o.prints[name] = fp
		rec, found, err := o.store.LookupBuild(ctx, name, fp)
		switch {
		case err != nil:
			o.log.Warn().Str("engine", name).Err(err).Msg("store: build lookup failed; stored answers wait for the live engine")
			continue
		case !found:
			continue
		}
		if rec.Absent != "" {
			if _, err := os.Stat(rec.Absent); !errors.Is(err, fs.ErrNotExist) {
				o.log.Info().Str("engine", name).Str("bundled", rec.Absent).Msg("a bundled build may now be installed: stored answers wait for the live engine")
				continue
			}
		}
		o.predicted[name] = engineBuild{rec.Version, rec.Route}
		o.log.Info().Str("engine", name).Str("version", rec.Version).Str("route", rec.Route).
			Msg("build known from its fingerprint: stored answers served while it launches")
	}
}

// settleBuild compares the build name's live launch reported with the one its
// fingerprint predicted, and records it for the next start. A contradiction is logged
// as an error, counted (ping's store.build_mismatches) and its record dropped.
func (o *Oracle) settleBuild(ctx context.Context, name string, cfg Config, live engineBuild, absent string) {
	fp, ok := o.prints[name]
	if !ok {
		return
	}
	o.stateMu.Lock()
	pred, had := o.predicted[name]
	delete(o.predicted, name)
	o.stateMu.Unlock()
	if had && pred != live {
		o.log.Error().Str("engine", name).Str("recorded_version", pred.version).Str("recorded_route", pred.route).
			Str("version", live.version).Str("route", live.route).
			Msg("the live engine is not the build its fingerprint recorded: answers stored for the recorded build may have been served for it; record dropped")
		if err := o.store.BuildMismatch(ctx, name, fp); err != nil {
			o.log.Warn().Str("engine", name).Err(err).Msg("store: dropping the build record failed")
		}
	}
	if cfg.Browsers == browser.RouteAuto && cfg.executablePath(name) == "" && absent == "" {
		return // the auto route launched a bundled build: not fingerprinted
	}
	if now, ok := buildPrint(cfg, name); !ok || now != fp {
		o.log.Warn().Str("engine", name).Msg("the engine's files changed while it launched; its build is not recorded")
		return
	}
	if had && pred == live {
		return // already recorded
	}
	if err := o.store.PutBuild(ctx, store.Build{Engine: name, Fingerprint: fp, Version: live.version, Route: live.route, Absent: absent}); err != nil {
		o.log.Warn().Str("engine", name).Err(err).Msg("store: recording the build failed")
	}
}
