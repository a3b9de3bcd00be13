package oracle

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/layout-oracle/oracle/profiles"
	"github.com/layout-oracle/oracle/store"
	"github.com/layout-oracle/oracle/trace"
	"github.com/rs/zerolog"
)

// Browser routes, chosen by --browsers.
const (
	RouteSystem     = "system"     // Debian's builds: Chromium and Firefox ESR via playwright-go, WebKitGTK via WebDriver
	RoutePlaywright = "playwright" // Playwright's bundled builds of all three (needs `playwright install`)
	RouteAuto       = "auto"       // per engine, the bundled build where installed, else the system one
)

// Config is everything chosen once at startup.
type Config struct {
	Engines  []string // engines to launch; empty means all
	Browsers string   // RouteSystem, RoutePlaywright or RouteAuto
	Profile  profiles.Profile
	Deadline time.Duration // per engine per request; 0 means DefaultDeadline
	MaxLine  int           // bytes; 0 means DefaultMaxLine
	Pages    int           // pages (browser instances) per engine; 0 means DefaultPages
	Inflight int           // requests served at once; 0 means Pages
	// ChromiumPath, FirefoxPath and WebKitDriverPath override an engine's binary
	// (empty: the system build's). A named binary means the system route for that
	// engine, whatever Browsers says.
	ChromiumPath, FirefoxPath, WebKitDriverPath string
	// TraceLimits bound one trace's records and bytes; zero fields mean
	// trace.DefaultLimits.
	TraceLimits trace.Limits
	// Artifacts is a directory for screenshot files; empty: screenshots are base64
	// in the dump.
	Artifacts string
	// ProgressEvery is how often the progress line is logged while serving; 0 means
	// DefaultProgressEvery, negative never.
	ProgressEvery time.Duration
	// DocRoot, when not "", is a directory the oracle's origin serves read-only at /
	// on every case origin, and the root of "url" requests (docs/web-content.md).
	DocRoot string
	// RequireSandbox makes Launch fail unless every engine that came up runs with
	// its sandbox on (docs/sandbox.md).
	RequireSandbox bool
	// Store, when not nil, answers cases whose answers it holds and keeps new ones
	// (docs/store.md). The caller opens it and closes it after the oracle.
	Store *store.Store
	// DumpMaxNodes bounds one geometry dump's elements (--dump-max-nodes); 0 means
	// DefaultDumpMaxNodes.
	DumpMaxNodes int

	// originPort is the origin server's port, which every engine uses as its proxy
	// (network.go); Launch sets it.
	originPort int
}

// executablePath is the binary override for engine, or "".
func (c Config) executablePath(engine string) string {
	return map[string]string{Chromium: c.ChromiumPath, Firefox: c.FirefoxPath, WebKit: c.WebKitDriverPath}[engine]
}

// DefaultPages suits the 2-core machines this runs on: two cases per engine in
// flight keep both cores busy while the other case waits on its driver's round trip
// (make bench measures the alternatives).
const DefaultPages = 2

// Launch starts every configured engine at once and returns the oracle serving the
// ones that came up. An engine that fails to launch is logged and left out (requests
// naming it get "engine not launched"); Launch fails only when none came up.
func Launch(ctx context.Context, cfg Config, log zerolog.Logger) (*Oracle, error) {
	if cfg.Browsers == "" {
		cfg.Browsers = RouteAuto
	}
	switch cfg.Browsers {
	case RouteSystem, RoutePlaywright, RouteAuto:
	default:
		return nil, fmt.Errorf("unknown --browsers %q (known: system, playwright, auto)", cfg.Browsers)
	}
	names := cfg.Engines
	if len(names) == 0 {
		names = AllEngines
	}
	for _, n := range names {
		if !isKnownEngine(n) {
			return nil, fmt.Errorf("unknown engine %q (known: %s)", n, strings.Join(AllEngines, ", "))
		}
	}
	if cfg.Pages <= 0 {
		cfg.Pages = DefaultPages
	}
	if cfg.Inflight <= 0 {
		cfg.Inflight = cfg.Pages
	}
	o := &Oracle{engines: map[string]*pool{}, failed: map[string]string{}, profile: cfg.Profile.Name,
		deadline: cfg.Deadline, maxLine: cfg.MaxLine, inflight: cfg.Inflight, log: log}
	if o.deadline <= 0 {
		o.deadline = DefaultDeadline
	}
	o.traceLimits = cfg.TraceLimits
	o.artifacts = cfg.Artifacts
	o.progressEvery = cfg.ProgressEvery
	if o.progressEvery == 0 {
		o.progressEvery = DefaultProgressEvery
	}
	o.store = cfg.Store
	o.dumpMaxNodes = cfg.DumpMaxNodes
	if o.dumpMaxNodes <= 0 {
		o.dumpMaxNodes = DefaultDumpMaxNodes
	}
	if o.traceLimits.Records <= 0 {
		o.traceLimits.Records = trace.DefaultLimits.Records
	}
	if o.traceLimits.Bytes <= 0 {
		o.traceLimits.Bytes = trace.DefaultLimits.Bytes
	}

	var err error
	if o.origin, err = startOrigin(log); err != nil {
		return nil, err
	}
	o.closers = append(o.closers, o.origin.Close)
	if cfg.DocRoot != "" {
		d, err := openDocRoot(cfg.DocRoot)
		if err != nil {
			o.origin.Close()
			return nil, err
		}
		o.origin.setDocRoot(d)
		o.closers = append(o.closers, d.Close)
		log.Info().Str("docroot", cfg.DocRoot).Msg("serving the docroot read-only on case origins")
	}
	cfg.originPort = o.origin.port

	start := time.Now()
	var mu sync.Mutex
	var wg sync.WaitGroup
	pages := map[string][]Engine{}
	for _, name := range uniq(names) {
		for i := 0; i < cfg.Pages; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				e, err := launchEngine(ctx, name, cfg, log)
				if err == nil {
					err = verifyViewport(ctx, e)
					if err == nil {
						// The check ran in the page: the first case gets a fresh global too.
						err = e.Reset(ctx)
					}
					if err != nil {
						if cerr := e.Close(); cerr != nil {
							err = fmt.Errorf("%w (closing it failed too: %v)", err, cerr)
						}
					}
				}
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					log.Error().Str("engine", name).Int("page", i).Err(err).Msg("engine failed to launch")
					o.failed[name] = err.Error()
					return
				}
				pages[name] = append(pages[name], e)
				o.closers = append(o.closers, e.Close)
			}()
		}
	}
	wg.Wait()
	for _, name := range AllEngines {
		if len(pages[name]) == 0 {
			continue
		}
		if err := sameBuild(pages[name]); err != nil {
			return nil, errors.Join(err, o.Close())
		}
		if len(pages[name]) < cfg.Pages {
			log.Warn().Str("engine", name).Int("pages", len(pages[name])).Int("wanted", cfg.Pages).Msg("serving with fewer pages")
		}
		delete(o.failed, name) // some pages came up: the engine serves
		o.engines[name] = newPool(name, pages[name])
		o.order = append(o.order, name)
	}
	if len(o.order) == 0 {
		return nil, errors.Join(errors.New("no engine launched"), o.Close())
	}
	if err := o.checkSandboxes(cfg.RequireSandbox); err != nil {
		return nil, errors.Join(err, o.Close())
	}
	log.Info().Strs("engines", o.order).Str("profile", o.profile).Dur("launch", time.Since(start)).Msg("oracle ready")
	return o, nil
}

// checkSandboxes logs each engine's sandbox as /proc shows it once its pages are
// open, and with require refuses to go on when one is off.
func (o *Oracle) checkSandboxes(require bool) error {
	states := map[string]SandboxState{}
	for _, name := range o.order {
		st, ok := o.engines[name].sandbox()
		if !ok {
			continue
		}
		states[name] = st
		if st.On {
			o.log.Info().Str("engine", name).Str("user", st.User).Str("sandbox", st.Sandbox).Msg("sandbox on")
		} else {
			o.log.Warn().Str("engine", name).Str("user", st.User).Str("reason", st.Reason).Msg("sandbox unavailable")
		}
	}
	if require {
		return requireSandboxes(states)
	}
	return nil
}

// sameBuild refuses a pool whose pages would answer from different builds.
func sameBuild(pages []Engine) error {
	for _, e := range pages[1:] {
		if e.Version() != pages[0].Version() || e.Route() != pages[0].Route() {
			return fmt.Errorf("%s: pages launched different builds: %s (%s) and %s (%s)",
				e.Name(), pages[0].Version(), pages[0].Route(), e.Version(), e.Route())
		}
	}
	return nil
}

// launchEngine launches one page of engine. A Playwright page gets a Playwright
// driver (a node process) of its own: the driver relays every byte of a case, so a
// hostile one (50 MB of html) clogs it for tens of seconds, and a private driver
// keeps that to the page that took the case while the others serve on.
func launchEngine(ctx context.Context, name string, cfg Config, log zerolog.Logger) (Engine, error) {
	exe := cfg.executablePath(name)
	s, err := settingsFor(cfg)
	if err != nil {
		return nil, err
	}
	webDriver := func() (Engine, error) {
		return LaunchWebDriver(ctx, WebDriverOptions{DriverPath: exe, BrowserArgs: s.WebKitArgs,
			Capabilities: s.WebDriverCaps, Env: withEnv(s.Env, s.WebKitEnv)}, log)
	}
	if name == WebKit && (cfg.Browsers == RouteSystem || exe != "") {
		return webDriver()
	}
	pw, err := StartPlaywright(log)
	if err != nil {
		return nil, err
	}
	bundled := cfg.Browsers == RoutePlaywright
	if cfg.Browsers == RouteAuto && exe == "" {
		_, bundled = pw.BundledPath(name)
	}
	if name == WebKit && !bundled {
		if err := pw.Stop(); err != nil { // not fatal: WebKit does not need it
			log.Warn().Err(err).Msg("stop the Playwright driver started to look for a bundled WebKit")
		}
		return webDriver()
	}
	opts := PlaywrightOptions{Engine: name, Bundled: bundled, Permissions: s.Permissions,
		InitScripts: s.InitScripts, ExecutablePath: exe, Env: s.Env}
	switch name {
	case Chromium:
		opts.Args = s.ChromiumArgs
	case Firefox:
		opts.FirefoxPrefs = s.FirefoxPrefs
		opts.Permissions = nil // Firefox's fake media comes from prefs; it has no camera grant
	}
	e, err := pw.LaunchPlaywright(opts, log)
	if err != nil {
		return nil, errors.Join(err, pw.Stop())
	}
	e.(*playwrightEngine).driver = pw
	return e, nil
}

// verifyViewport checks the page really is the spec's 800x600 before it serves a case.
func verifyViewport(ctx context.Context, e Engine) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	raw, err := e.Load(ctx, "", "(function(){ return [innerWidth, innerHeight]; })")
	if err != nil {
		return fmt.Errorf("viewport check: %w", err)
	}
	want := fmt.Sprintf("[%g,%g]", viewportWidth, viewportHeight)
	if string(raw) != want {
		return fmt.Errorf("viewport is %s, want %s", raw, want)
	}
	return nil
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
