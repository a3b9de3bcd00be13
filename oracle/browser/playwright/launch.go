// Launching a browser through the Playwright driver: the system or bundled build,
// its arguments, prefs and environment, and the context and page every engine opens.

package playwright

import (
	"cmp"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/oracle/browser"

	"github.com/layout-oracle/oracle/oracle/browser/host"
	"github.com/layout-oracle/oracle/profiles"
	"github.com/mxschmitt/playwright-go"
	"github.com/rs/zerolog"
)

// Options chooses one engine's build and launch profile.
type Options struct {
	Engine string // chromium, firefox or webkit
	// Bundled launches Playwright's own build; otherwise the Debian system build
	// (Chromium from SystemChromium, Firefox ESR over WebDriver BiDi, channel moz-firefox).
	Bundled      bool
	Args         []string            // launch profile's extra arguments
	FirefoxPrefs map[string]any      // launch profile's Firefox prefs
	Permissions  []string            // launch profile's permission grants
	InitScripts  []string            // run before any page script, in every page
	Emulation    *profiles.Emulation // launch profile's emulated hardware (playwright/emulation.go)
	Env          []string            // KEY=VALUE added to the browser's environment
	// ExecutablePath replaces the system build's binary (SystemChromium,
	// SystemFirefox); not used with Bundled.
	ExecutablePath string
	// MemoryCgroup is the cgroup.procs file the browser's processes go in
	// (host/memlimit.go); "": none.
	MemoryCgroup string
	// MaxMessage bounds one message from a remote server (relay.go); 0:
	// relayMaxMessage.
	MaxMessage int64
	// BundledAbsent: see browser.BundledAbsent.
	BundledAbsent string
}

// OptionsFor is what engine's launch on this route takes of the launch settings s:
// the settings every engine shares, and the engine's own share (its knowledge's
// settings). Local launching (package routes) and remote endpoints (package oracle)
// both build their options here.
func OptionsFor(engine string, s browser.LaunchSettings) Options {
	opts := Options{Engine: engine, Permissions: s.Permissions, InitScripts: s.InitScripts,
		Env: s.Env, MemoryCgroup: s.MemoryCgroup, Emulation: s.Emulation}
	if k := knowledgeOf(engine); k.settings != nil {
		k.settings(&opts, s)
	}
	return opts
}

// Launch opens one browser with one 800x600 page, kept for the process
// lifetime, and relaunched the same way if the browser dies.
func (d *Driver) Launch(opts Options, log zerolog.Logger) (browser.Engine, error) {
	e, err := d.launchPlaywright(opts, log, new(pageTracker))
	if err != nil {
		return nil, err
	}
	e.relaunch = func(on *Driver) (*playwrightEngine, error) { return on.launchPlaywright(opts, log, e.pages) }
	return e, nil
}

func (d *Driver) launchPlaywright(opts Options, log zerolog.Logger, pages *pageTracker) (*playwrightEngine, error) {
	bt := d.browserType(opts.Engine)
	if bt == nil {
		return nil, fmt.Errorf("unknown engine %q", opts.Engine)
	}
	launch := playwright.BrowserTypeLaunchOptions{
		Headless: playwright.Bool(true),
		Args:     opts.Args,
		Timeout:  playwright.Float(60_000),
	}
	k := knowledgeOf(opts.Engine)
	var route, exe string
	switch {
	case opts.Bundled:
		path, ok := d.BundledPath(opts.Engine)
		if !ok {
			return nil, browser.EngineErrorf(opts.Engine, "Playwright's bundled build is not installed (%s)", path)
		}
		route, exe = "playwright-go bundled "+path, path
	case k.systemExe != "":
		exe = cmp.Or(opts.ExecutablePath, k.systemExe)
		if k.channel != "" {
			launch.Channel = playwright.String(k.channel)
		}
		route = "playwright-go system " + exe + k.routeNote
	default:
		return nil, browser.EngineErrorf(opts.Engine, "no system route through Playwright (stock WebKitGTK is driven over WebDriver)")
	}
	if k.launch != nil {
		k.launch(&launch, opts)
	}
	// The driver starts the browser through a wrapper that drops to the browser
	// user (host/user.go); as an unprivileged oracle, the binary itself.
	wrapper, err := host.BrowserWrapper(exe)
	if err != nil {
		return nil, browser.EngineErrorf(opts.Engine, "%w", err)
	}
	if wrapper != exe || !opts.Bundled {
		launch.ExecutablePath = playwright.String(wrapper)
	}
	env := host.WrappedBrowserEnv(opts.Env, opts.MemoryCgroup)
	if len(env) > 0 {
		// Playwright's env replaces the browser's whole environment: start from ours.
		launch.Env = map[string]string{}
		for _, kv := range host.WithEnv(os.Environ(), env) {
			k, v, _ := strings.Cut(kv, "=")
			launch.Env[k] = v
		}
	}
	start := time.Now()
	d.launchMu.Lock()
	before := d.children()
	pwb, err := bt.Launch(launch)
	pids := newPIDs(before, d.children())
	d.launchMu.Unlock()
	if err != nil {
		return nil, browser.EngineErrorf(opts.Engine, "launch: %w", err)
	}
	e := &playwrightEngine{name: opts.Engine, version: pwb.Version(), route: route, browser: pwb, log: log,
		initScripts: len(opts.InitScripts) > 0, pids: pids, pw: d, opts: opts, pages: pages}
	if e.context, e.page, err = e.openContext(pwb); err != nil {
		e.Close()
		return nil, err
	}
	// With the wrapper the browser was born in its cgroup; without one (an
	// unprivileged oracle) its processes are moved there now.
	if err := host.PlaceTree(opts.MemoryCgroup, pids); err != nil {
		log.Warn().Str("engine", e.name).Err(err).Msg("browser processes left outside the engine's memory cgroup")
	}
	if opts.Engine == browser.Firefox {
		host.NoDelayFirefox(opts.Engine, pids, log) // host/nodelay_linux.go: about 40 ms off every Firefox call
	}
	log.Info().Str("engine", e.name).Str("version", e.version).Str("route", route).
		Dur("launch", time.Since(start)).Msg("engine launched")
	return e, nil
}

// openContext opens the engine's browser context (viewport, permissions, media
// features, init scripts) in browser, and its one page.
func (e *playwrightEngine) openContext(pwb playwright.Browser) (playwright.BrowserContext, playwright.Page, error) {
	geolocation, grants := e.contextEmulation()
	bctx, err := pwb.NewContext(playwright.BrowserNewContextOptions{
		Viewport: &playwright.Size{Width: int(dump.Viewport.Width), Height: int(dump.Viewport.Height)},
		// The pinned screen (environment/environment.go): Playwright's default is the viewport.
		Screen:      &playwright.Size{Width: host.ScreenWidth, Height: host.ScreenHeight},
		Permissions: append(append([]string(nil), e.opts.Permissions...), grants...),
		Geolocation: geolocation,
		// A case's download is refused (docs/untrusted.md): in Firefox one took the
		// focus from the page for every later case, and an accepted one is
		// a file of the case's size.
		AcceptDownloads: playwright.Bool(false),
		// The pinned environment's media features (environment/environment.go), explicit rather
		// than Playwright's defaults.
		ColorScheme:   playwright.ColorSchemeLight,
		ReducedMotion: playwright.ReducedMotionNoPreference,
		ForcedColors:  playwright.ForcedColorsNone,
		Contrast:      playwright.ContrastNoPreference,
	})
	if err != nil {
		return nil, nil, e.errorf("new context: %w", err)
	}
	e.pages.trackContext(bctx)
	for _, s := range e.opts.InitScripts {
		if err := bctx.AddInitScript(playwright.Script{Content: playwright.String(s)}); err != nil {
			bctx.Close()
			e.pages.forgetContext(bctx)
			return nil, nil, e.errorf("init script: %w", err)
		}
	}
	page, err := e.newPage(bctx)
	if err != nil {
		bctx.Close()
		e.pages.forgetContext(bctx)
		return nil, nil, e.errorf("new page: %w", err)
	}
	return bctx, page, nil
}
