package oracle

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/layout-oracle/oracle/profiles"
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
}

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
	o := &Oracle{engines: map[string]*slot{}, failed: map[string]string{}, profile: cfg.Profile.Name,
		deadline: cfg.Deadline, maxLine: cfg.MaxLine, log: log}
	if o.deadline <= 0 {
		o.deadline = DefaultDeadline
	}

	var pw *PlaywrightDriver
	if needsPlaywright(names, cfg.Browsers) {
		var err error
		if pw, err = StartPlaywright(log); err != nil {
			return nil, err
		}
		o.closers = append(o.closers, pw.Stop)
	}

	start := time.Now()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, name := range uniq(names) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, err := launchEngine(ctx, pw, name, cfg, log)
			if err == nil {
				err = verifyViewport(ctx, e)
				if err != nil {
					e.Close()
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				log.Error().Str("engine", name).Err(err).Msg("engine failed to launch; serving without it")
				o.failed[name] = err.Error()
				return
			}
			o.engines[name] = &slot{engine: e}
		}()
	}
	wg.Wait()
	for _, name := range AllEngines {
		if s, ok := o.engines[name]; ok {
			o.order = append(o.order, name)
			o.closers = append(o.closers, s.engine.Close)
		}
	}
	if len(o.order) == 0 {
		o.Close()
		return nil, errors.New("no engine launched")
	}
	log.Info().Strs("engines", o.order).Str("profile", o.profile).Dur("launch", time.Since(start)).Msg("oracle ready")
	return o, nil
}

func needsPlaywright(names []string, browsers string) bool {
	for _, n := range names {
		if n != WebKit || browsers != RouteSystem {
			return true
		}
	}
	return false
}

func launchEngine(ctx context.Context, pw *PlaywrightDriver, name string, cfg Config, log zerolog.Logger) (Engine, error) {
	bundled := cfg.Browsers == RoutePlaywright
	if cfg.Browsers == RouteAuto && pw != nil {
		_, bundled = pw.BundledPath(name)
	}
	p := cfg.Profile
	if name == WebKit && !bundled {
		return LaunchWebDriver(ctx, WebDriverOptions{}, log)
	}
	opts := PlaywrightOptions{Engine: name, Bundled: bundled, Permissions: p.Permissions}
	switch name {
	case Chromium:
		opts.Args = p.ChromiumArgs
	case Firefox:
		opts.FirefoxPrefs = p.FirefoxPrefs
		opts.Permissions = nil // Firefox's fake media comes from prefs; it has no camera grant
	}
	return pw.LaunchPlaywright(opts, log)
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
