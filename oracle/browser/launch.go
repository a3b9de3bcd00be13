package browser

import (
	"context"
	"errors"
	"strings"

	"github.com/layout-oracle/oracle/oracle/browser/host"
	"github.com/rs/zerolog"
)

// Browser routes, chosen by --browsers.
const (
	RouteSystem     = "system"     // Debian's builds: Chromium over CDP, Firefox ESR over BiDi (or playwright-go: --chromium-route, --firefox-route), WebKitGTK over WebDriver
	RoutePlaywright = "playwright" // Playwright's bundled builds of all three (needs `playwright install`)
	RouteAuto       = "auto"       // per engine, the bundled build where installed, else the system one
)

// Launch launches one page of engine by route (RouteSystem, RoutePlaywright or
// RouteAuto) with the launch settings s; exe, when not "", is the engine's binary
// (Chromium, Firefox, or WebKitWebDriver), which means the system route for that
// engine. A Playwright page gets a Playwright driver (a node process) of its own:
// the driver relays every byte of a case, so a hostile one (50 MB of html) clogs it
// for tens of seconds, and a private driver keeps that to the page that took the
// case while the others serve on.
func Launch(ctx context.Context, name, route, exe string, s LaunchSettings, log zerolog.Logger) (Engine, error) {
	absent := "" // the bundled build's path, when the auto route found none there
	webDriver := func() (Engine, error) {
		e, err := LaunchWebDriver(ctx, WebDriverOptions{DriverPath: exe, BrowserArgs: s.WebKitArgs,
			Capabilities: s.WebDriverCaps, Env: host.WithEnv(s.Env, s.WebKitEnv), MaxReply: s.MaxReply, MemoryCgroup: s.MemoryCgroup}, log)
		if err == nil {
			e.(*webDriverEngine).bundledAbsent = absent
		}
		return e, err
	}
	if name == WebKit && (route == RouteSystem || exe != "") {
		return webDriver()
	}
	bidi := func() (Engine, error) {
		if s.Emulation != nil {
			return nil, engineErrorf(Firefox, "the launch profile's emulated hardware: %w", ErrNotOnBiDiRoute)
		}
		e, err := LaunchBiDi(ctx, BiDiOptions{ExecutablePath: exe, Prefs: s.FirefoxPrefs, Env: s.Env,
			MemoryCgroup: s.MemoryCgroup, MaxReply: s.MaxReply, InitScripts: s.InitScripts}, log)
		if err == nil {
			e.(*bidiEngine).bundledAbsent = absent
		}
		return e, err
	}
	onBiDi := name == Firefox && s.FirefoxRoute == FirefoxRouteBiDi
	if onBiDi && (route == RouteSystem || exe != "") {
		return bidi()
	}
	cdp := func() (Engine, error) {
		if s.Emulation != nil {
			return nil, engineErrorf(Chromium, "the launch profile's emulated hardware: %w", ErrNotOnCDPRoute)
		}
		e, err := LaunchCDP(ctx, CDPOptions{ExecutablePath: exe, Args: s.ChromiumArgs, Env: s.Env, Permissions: s.Permissions,
			InitScripts: s.InitScripts, MemoryCgroup: s.MemoryCgroup, MaxReply: s.MaxReply}, log)
		if err == nil {
			e.(*cdpEngine).bundledAbsent = absent
		}
		return e, err
	}
	onCDP := name == Chromium && s.ChromiumRoute == ChromiumRouteCDP
	if onCDP && (route == RouteSystem || exe != "") {
		return cdp()
	}
	pw, err := StartPlaywright(log)
	if err != nil {
		return nil, err
	}
	bundled := route == RoutePlaywright
	if route == RouteAuto && exe == "" {
		var path string
		if path, bundled = pw.BundledPath(name); !bundled {
			absent = path
		}
	}
	if (name == WebKit || onBiDi || onCDP) && !bundled {
		if err := pw.Stop(); err != nil { // not fatal: none of these routes needs it
			log.Warn().Err(err).Str("engine", name).Msg("stop the Playwright driver started to look for a bundled build")
		}
		if onBiDi {
			return bidi()
		}
		if onCDP {
			return cdp()
		}
		return webDriver()
	}
	opts := PlaywrightOptions{Engine: name, Bundled: bundled, Permissions: s.Permissions,
		InitScripts: s.InitScripts, ExecutablePath: exe, Env: s.Env, MemoryCgroup: s.MemoryCgroup, Emulation: s.Emulation}
	if k := knowledgeOf(name); k.settings != nil {
		k.settings(&opts, s)
	}
	e, err := pw.LaunchPlaywright(opts, log)
	if err != nil {
		return nil, errors.Join(err, pw.Stop())
	}
	e.(*playwrightEngine).driver = pw // Close stops it
	e.(*playwrightEngine).bundledAbsent = absent
	return e, nil
}

// BundledAbsent is, for an engine the auto route launched from the system build, the
// path where the Playwright driver looked for its bundled build and found none; ""
// for any other route. While that path does not exist, the auto route chooses the
// system build again (the oracle's warm start relies on it: oracle/buildprint.go).
func BundledAbsent(e Engine) string {
	switch e := e.(type) {
	case *playwrightEngine:
		return e.bundledAbsent
	case *webDriverEngine:
		return e.bundledAbsent
	case *bidiEngine:
		return e.bundledAbsent
	case *cdpEngine:
		return e.bundledAbsent
	}
	return ""
}

// WebKitRoute is RoutePlaywright when a bundled WebKit is installed, else RouteSystem
// (WebKitGTK over WebDriver) and the path where the bundled build was looked for (as
// BundledAbsent); a driver that cannot start leaves the choice to each page
// (RouteAuto), which reports why.
func WebKitRoute(log zerolog.Logger) (route, absent string) {
	pw, err := StartPlaywright(log)
	if err != nil {
		return RouteAuto, ""
	}
	path, bundled := pw.BundledPath(WebKit)
	if err := pw.Stop(); err != nil {
		log.Warn().Err(err).Msg("stop the Playwright driver started to look for a bundled WebKit")
	}
	if bundled {
		return RoutePlaywright, ""
	}
	return RouteSystem, path
}

// SplitList parses a comma-separated flag value (--engines=chromium,webkit),
// dropping blanks.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
