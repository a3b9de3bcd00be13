// Package routes launches one page of an engine by the route the oracle chose for
// it. Each engine's routes are a row of one table (wptrunner's one file per product,
// naming its executors, is the model): the oracle's own client of its system build
// (the CDP route for Chromium, the BiDi route for Firefox, W3C WebDriver for
// WebKitGTK) and the Playwright route, which also serves Playwright's bundled builds.
// It is the one package that knows every route; the routes know nothing of each other.
package routes

import (
	"context"
	"errors"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/browser/bidi"
	"github.com/layout-oracle/oracle/oracle/browser/cdp"
	"github.com/layout-oracle/oracle/oracle/browser/host"
	"github.com/layout-oracle/oracle/oracle/browser/playwright"
	"github.com/layout-oracle/oracle/oracle/browser/webdriver"
	"github.com/rs/zerolog"
)

// engineRoutes is one engine's row: its own-client route of the system build, and
// when the launch settings choose it over Playwright's driving of that build.
type engineRoutes struct {
	// own launches the system build (exe: its binary, "": the default) over the
	// oracle's own client; absent is browser.BundledAbsent's path.
	own func(ctx context.Context, exe, absent string, s browser.LaunchSettings, log zerolog.Logger) (browser.Engine, error)
	// chosen says whether s drives the system build over own rather than Playwright.
	chosen func(s browser.LaunchSettings) bool
}

var table = map[string]engineRoutes{
	browser.Chromium: {
		own: func(ctx context.Context, exe, absent string, s browser.LaunchSettings, log zerolog.Logger) (browser.Engine, error) {
			if s.Emulation != nil {
				return nil, browser.EngineErrorf(browser.Chromium, "the launch profile's emulated hardware: %w", cdp.ErrNotOnRoute)
			}
			return cdp.Launch(ctx, cdp.Options{ExecutablePath: exe, Args: s.ChromiumArgs, Env: s.Env, Permissions: s.Permissions,
				InitScripts: s.InitScripts, MemoryCgroup: s.MemoryCgroup, MaxReply: s.MaxReply, BundledAbsent: absent}, log)
		},
		chosen: func(s browser.LaunchSettings) bool { return s.ChromiumRoute == browser.ChromiumRouteCDP },
	},
	browser.Firefox: {
		own: func(ctx context.Context, exe, absent string, s browser.LaunchSettings, log zerolog.Logger) (browser.Engine, error) {
			if s.Emulation != nil {
				return nil, browser.EngineErrorf(browser.Firefox, "the launch profile's emulated hardware: %w", bidi.ErrNotOnRoute)
			}
			return bidi.Launch(ctx, bidi.Options{ExecutablePath: exe, Prefs: s.FirefoxPrefs, Env: s.Env,
				MemoryCgroup: s.MemoryCgroup, MaxReply: s.MaxReply, InitScripts: s.InitScripts, BundledAbsent: absent}, log)
		},
		chosen: func(s browser.LaunchSettings) bool { return s.FirefoxRoute == browser.FirefoxRouteBiDi },
	},
	// Stock WebKitGTK has no system route through Playwright: WebDriver always.
	browser.WebKit: {
		own: func(ctx context.Context, exe, absent string, s browser.LaunchSettings, log zerolog.Logger) (browser.Engine, error) {
			return webdriver.Launch(ctx, webdriver.Options{DriverPath: exe, BrowserArgs: s.WebKitArgs, Capabilities: s.WebDriverCaps,
				Env: host.WithEnv(s.Env, s.WebKitEnv), MaxReply: s.MaxReply, MemoryCgroup: s.MemoryCgroup, BundledAbsent: absent}, log)
		},
		chosen: func(browser.LaunchSettings) bool { return true },
	},
}

// Launch launches one page of engine by route (browser.RouteSystem, RoutePlaywright
// or RouteAuto) with the launch settings s; exe, when not "", is the engine's binary
// (Chromium, Firefox, or WebKitWebDriver), which means the system route for that
// engine. A Playwright page gets a Playwright driver (a node process) of its own:
// the driver relays every byte of a case, so a hostile one (50 MB of html) clogs it
// for tens of seconds, and a private driver keeps that to the page that took the
// case while the others serve on. On the auto route, a driver is started to look for
// a bundled build only where one can be installed (playwright.NoBundledBuilds).
func Launch(ctx context.Context, name, route, exe string, s browser.LaunchSettings, log zerolog.Logger) (browser.Engine, error) {
	r := table[name]
	own := r.own != nil && r.chosen(s)
	if own && (route == browser.RouteSystem || exe != "") {
		return r.own(ctx, exe, "", s, log)
	}
	if own && route == browser.RouteAuto && exe == "" {
		if dir, none := playwright.NoBundledBuilds(); none {
			return r.own(ctx, exe, dir, s, log) // no driver started only to look
		}
	}
	pw, err := playwright.Start(log)
	if err != nil {
		return nil, err
	}
	bundled := route == browser.RoutePlaywright
	absent := "" // the bundled build's path, when the auto route found none there
	if route == browser.RouteAuto && exe == "" {
		var path string
		if path, bundled = pw.BundledPath(name); !bundled {
			absent = path
		}
	}
	if own && !bundled {
		if err := pw.Stop(); err != nil { // not fatal: the own route does not need it
			log.Warn().Err(err).Str("engine", name).Msg("stop the Playwright driver started to look for a bundled build")
		}
		return r.own(ctx, exe, absent, s, log)
	}
	opts := playwright.OptionsFor(name, s)
	opts.Bundled, opts.ExecutablePath, opts.BundledAbsent = bundled, exe, absent
	e, err := pw.Launch(opts, log)
	if err != nil {
		return nil, errors.Join(err, pw.Stop())
	}
	playwright.OwnDriver(e, pw) // Close stops it
	return e, nil
}

// WebKitRoute is RoutePlaywright when a bundled WebKit is installed, else RouteSystem
// (WebKitGTK over WebDriver) and the path where the bundled build was looked for (as
// browser.BundledAbsent); a driver that cannot start leaves the choice to each page
// (RouteAuto), which reports why.
func WebKitRoute(log zerolog.Logger) (route, absent string) {
	if dir, none := playwright.NoBundledBuilds(); none {
		return browser.RouteSystem, dir
	}
	pw, err := playwright.Start(log)
	if err != nil {
		return browser.RouteAuto, ""
	}
	path, bundled := pw.BundledPath(browser.WebKit)
	if err := pw.Stop(); err != nil {
		log.Warn().Err(err).Msg("stop the Playwright driver started to look for a bundled WebKit")
	}
	if bundled {
		return browser.RoutePlaywright, ""
	}
	return browser.RouteSystem, path
}
