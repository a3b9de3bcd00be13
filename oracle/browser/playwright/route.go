package playwright

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/browser/host"
	"github.com/rs/zerolog"
)

// Route is the Playwright route's row in the route table (package routes): the
// system Chromium and Firefox through playwright-go, Playwright's bundled builds
// (--browsers), and remote Playwright servers (--connect). A page gets a Playwright
// driver (a node process) of its own: the driver relays every byte of a case, so a
// hostile one (50 MB of html) clogs it for tens of seconds, and a private driver
// keeps that to the page that took the case while the others serve on.
var Route interface {
	browser.Bundler
	browser.Connector
} = route{}

type route struct{}

func (route) Name() string      { return "playwright" }
func (route) Engines() []string { return []string{browser.Chromium, browser.Firefox} }
func (route) Help() string      { return "playwright-go" }
func (route) Emulates() bool    { return true }

// Programs: the route's in-page programs are the core's (package inpage).
func (route) Programs() fs.FS { return nil }

// Launch launches the system build (or l.Exe) of engine through a driver of its own.
func (route) Launch(_ context.Context, engine string, l browser.RouteLaunch, log zerolog.Logger) (browser.Engine, error) {
	pw, err := Start(log)
	if err != nil {
		return nil, err
	}
	return launchOn(pw, engine, false, l, log)
}

// launchOn launches one page of engine on pw, which the page's Close stops.
func launchOn(pw *Driver, engine string, bundled bool, l browser.RouteLaunch, log zerolog.Logger) (browser.Engine, error) {
	opts := OptionsFor(engine, l.Settings)
	opts.Bundled, opts.ExecutablePath, opts.BundledAbsent = bundled, l.Exe, l.Absent
	e, err := pw.Launch(opts, log)
	if err != nil {
		return nil, errors.Join(err, pw.Stop())
	}
	ownDriver(e, pw)
	return e, nil
}

// LaunchBundled is browser.Bundler's. On the auto route, a driver is started to look
// for a bundled build only where one can be installed (NoBundledBuilds).
func (r route) LaunchBundled(ctx context.Context, engine, browsers string, own browser.Route, l browser.RouteLaunch, log zerolog.Logger) (browser.Engine, error) {
	if own != nil && own.Name() == r.Name() {
		own = nil // the system build through Playwright: the driver launches it
	}
	auto := browsers == browser.RouteAuto && l.Exe == ""
	if own != nil && auto {
		if dir, none := NoBundledBuilds(); none {
			l.Absent = dir
			return own.Launch(ctx, engine, l, log) // no driver started only to look
		}
	}
	pw, err := Start(log)
	if err != nil {
		return nil, err
	}
	bundled := browsers == browser.RoutePlaywright
	if auto {
		var path string
		if path, bundled = pw.BundledPath(engine); !bundled {
			l.Absent = path
		}
	}
	if own != nil && !bundled {
		if err := pw.Stop(); err != nil { // not fatal: the own route does not need it
			log.Warn().Err(err).Str("engine", engine).Msg("stop the Playwright driver started to look for a bundled build")
		}
		return own.Launch(ctx, engine, l, log)
	}
	return launchOn(pw, engine, bundled, l, log)
}

// AutoRoute is browser.Bundler's.
func (route) AutoRoute(engine string, log zerolog.Logger) (string, string) {
	if dir, none := NoBundledBuilds(); none {
		return browser.RouteSystem, dir
	}
	pw, err := Start(log)
	if err != nil {
		return browser.RouteAuto, ""
	}
	path, bundled := pw.BundledPath(engine)
	if err := pw.Stop(); err != nil {
		log.Warn().Err(err).Str("engine", engine).Msg("stop the Playwright driver started to look for a bundled build")
	}
	if bundled {
		return browser.RoutePlaywright, ""
	}
	return browser.RouteSystem, path
}

// LookupPrint is browser.Bundler's: where the driver looks for a bundled build
// follows from the driver's version (pinned by the playwright-go module this oracle
// was built with) and its environment.
func (route) LookupPrint() string {
	var b strings.Builder
	version := "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if strings.HasSuffix(m.Path, "/playwright-go") {
				version = m.Path + "@" + m.Version
			}
		}
	}
	fmt.Fprintf(&b, "driver=%s\n", version)
	for _, v := range []string{"PLAYWRIGHT_BROWSERS_PATH", "PLAYWRIGHT_DRIVER_PATH", "XDG_CACHE_HOME", "HOME"} {
		fmt.Fprintf(&b, "%s=%q\n", v, os.Getenv(v))
	}
	return b.String()
}

func (route) Install(log zerolog.Logger) error { return installDriver(log) }

// Connect opens a page on a remote Playwright server with a driver of its own.
func (route) Connect(_ context.Context, engine string, r browser.RemoteLaunch, log zerolog.Logger) (browser.Engine, error) {
	pw, err := Start(log)
	if err != nil {
		return nil, err
	}
	e, err := pw.connect(r.URL, remoteRoute(r), r.Proxy, remoteOptions(engine, r), log)
	if err != nil {
		return nil, errors.Join(err, pw.Stop())
	}
	ownDriver(e, pw)
	return e, nil
}

// remoteOptions is what a Playwright server endpoint of engine is asked for.
func remoteOptions(engine string, r browser.RemoteLaunch) Options {
	opts := OptionsFor(engine, r.Settings)
	opts.ExecutablePath, opts.MaxMessage = r.Exe, r.Settings.MaxReply
	return opts
}

// remoteRoute is the build a Playwright server is asked to launch under --browsers:
// the system builds (Debian's Chromium, Firefox ESR over BiDi) unless --browsers
// says playwright; a server's host cannot be asked which are installed, and an
// endpoint URL's own launch-options override either (docs/remote.md).
func remoteRoute(r browser.RemoteLaunch) string {
	if r.Browsers == browser.RoutePlaywright {
		return browser.RoutePlaywright
	}
	return browser.RouteSystem
}

// BuildFiles: Firefox's files whatever the route; Chromium's through Debian's
// wrapper script, which runs $LIBDIR/chromium after sourcing every file of
// /etc/chromium.d, any of which may set LIBDIR: all are fingerprinted.
func (route) BuildFiles(engine, exe string) ([]string, bool) {
	if engine == browser.Firefox {
		return browser.FirefoxBuildFiles(exe)
	}
	if exe != "" && exe != browser.SystemChromium {
		return []string{exe}, host.IsELF(exe)
	}
	sourced, ok := chromiumWrapperSources()
	if !ok {
		return nil, false
	}
	return append([]string{browser.SystemChromium, filepath.Join(chromiumLibDir, "chromium")}, sourced...), true
}

// chromiumLibDir is where Debian's /usr/bin/chromium wrapper script runs the browser
// from ($LIBDIR/chromium).
const chromiumLibDir = "/usr/lib/chromium"

// chromiumWrapperDir holds the files Debian's /usr/bin/chromium sources before it
// runs $LIBDIR/chromium (a variable for the tests).
var chromiumWrapperDir = "/etc/chromium.d"

// chromiumWrapperSources are the files the wrapper sources, as its loop picks them
// (every file of chromiumWrapperDir but README and dpkg's leftovers), in its order.
func chromiumWrapperSources() ([]string, bool) {
	entries, err := os.ReadDir(chromiumWrapperDir)
	if errors.Is(err, os.ErrNotExist) {
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
