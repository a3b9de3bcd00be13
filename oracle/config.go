package oracle

import (
	"time"

	"github.com/layout-oracle/oracle/oracle/browser/environment"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/browser/host"
	"github.com/layout-oracle/oracle/oracle/origin"
	"github.com/layout-oracle/oracle/oracle/pagecount"
	"github.com/layout-oracle/oracle/oracle/remote"
	"github.com/layout-oracle/oracle/profiles"
	"github.com/layout-oracle/oracle/store"
	"github.com/layout-oracle/oracle/trace"
)

// Config is everything chosen once at startup.
type Config struct {
	Engines  []string // engines to launch; empty means all
	Browsers string   // browser.RouteSystem, browser.RoutePlaywright or browser.RouteAuto
	Profile  profiles.Profile
	Deadline time.Duration // per engine per request; 0 means DefaultDeadline
	MaxLine  int           // bytes; 0 means DefaultMaxLine
	Pages    int           // pages (browser instances) per engine; 0 means pagecount.Default
	// EnginePages overrides Pages for the engines it names (--pages firefox=3,...).
	EnginePages map[string]int
	Inflight    int // requests served at once; 0 means the largest page count (defaultInflight)
	// ChromiumPath, FirefoxPath and WebKitDriverPath override an engine's binary
	// (empty: the system build's). A named binary means the system route for that
	// engine, whatever Browsers says.
	ChromiumPath, FirefoxPath, WebKitDriverPath string
	// Routes is the route table (package routes' Table): every route a page may be
	// launched over. Start refuses a Config without one.
	Routes browser.Routes
	// EngineRoutes is each engine's --ENGINE-route value: a route's name, or (absent,
	// "", browser.RouteAutoChoice) the table's choice (browser.Routes.Resolve).
	EngineRoutes map[string]string
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
	// FreshAlways gives every case a new document, inert or not (--inert-reuse=off):
	// the path the inert reuse is gated against (docs/untrusted.md, "Inert cases").
	FreshAlways bool
	// Verify measures every case this many times per engine and lists the items the
	// runs differ on (--verify; a request's "verify" overrides it); 0 or 1: once.
	Verify int
	// StoreMinRuns serves from the store only answers resting on at least this many
	// identical live runs (--store-min-runs; 0 or 1: any stable answer).
	StoreMinRuns int

	// Endpoints are remote browsers whose pages join their engine's pool
	// (--connect, --webdriver; remote.go, docs/remote.md).
	Endpoints []remote.Endpoint
	// OriginListen, when not "", is the address the origin listens on, and every
	// browser's proxy (--origin-listen): one remote browsers reach.
	OriginListen string

	// EngineMemory bounds each engine's processes, all its pages together, in bytes
	// (--engine-memory; host.MemoryBounds); 0: unbounded.
	EngineMemory int64

	mem *host.MemoryBounds // set by start from EngineMemory
	// originHost and originPort are the origin server's address, which every engine
	// uses as its proxy (origin.ProxySettings); Launch sets them.
	originHost string
	originPort int
}

// executablePath is the binary override for engine, or "".
func (c Config) executablePath(engine string) string {
	return map[string]string{browser.Chromium: c.ChromiumPath, browser.Firefox: c.FirefoxPath, browser.WebKit: c.WebKitDriverPath}[engine]
}

// pagesFor is engine's page count: its own from EnginePages, else Pages.
func (c Config) pagesFor(engine string) int {
	if n := c.EnginePages[engine]; n > 0 {
		return n
	}
	return c.Pages
}

// defaultInflight is --parallel's default: the largest page count among the engines.
// A request naming no engine holds one page of every engine, so the engine with the
// most pages bounds how many such requests can run at once; more in flight would
// only queue inside the other engines, where the wait for a page counts against the
// deadline. The sum would let single-engine requests use every page at once, at the
// price of queueing all-engine requests behind each other's deadlines.
func defaultInflight(cfg Config, names []string) int {
	n := 0
	for _, name := range names {
		n = max(n, cfg.totalPages(name))
	}
	return n
}

// defaultEnginePages fills in pagecount.PerEngine for a Config that chose no page
// counts at all.
func defaultEnginePages(cfg *Config) {
	if cfg.Pages > 0 || len(cfg.EnginePages) > 0 {
		return
	}
	cfg.EnginePages = map[string]int{}
	for name, n := range pagecount.PerEngine {
		cfg.EnginePages[name] = n
	}
}

// settingsFor is the merged launch settings every engine of this process gets.
func settingsFor(cfg Config) (browser.LaunchSettings, error) {
	var s browser.LaunchSettings
	env, err := environment.Settings()
	if err != nil {
		return s, err
	}
	s.Merge(env) // first: a launch profile may still override a pinned pref
	s.Merge(browser.ProfileSettings(cfg.Profile))
	s.Merge(browser.LaunchSettings{InitScripts: []string{trace.RecorderJS}, MaxReply: browser.MaxReplyFor(cfg.TraceLimits.Bytes)})
	s.Merge(processSettings())
	s.Merge(sharedStateSettings())
	s.Merge(origin.ProxySettings(cfg.originHost, cfg.originPort)) // last: nothing may loosen the allowlist
	return s, nil
}

// sharedStateSettings turn off what a browser keeps for all its pages beyond what the
// reset clears, where a case would leave it for later cases to see (docs/untrusted.md,
// "Per-case state"): Firefox's global history, which made a link to a URL one case
// navigated to :visited in every later case's screenshot.
func sharedStateSettings() browser.LaunchSettings {
	return browser.LaunchSettings{FirefoxPrefs: map[string]any{"places.history.enabled": false}}
}

// routeOf is the route of name's system build (nil: no row drives it): its
// --ENGINE-route, else the table's choice, which takes the oracle's own client
// before Playwright's (no driver relaying every case: docs/cdp-route.md,
// docs/bidi-route.md) except under a launch profile that emulates hardware.
func (cfg Config) routeOf(name string) (browser.Route, error) {
	return cfg.Routes.Resolve(name, cfg.EngineRoutes[name], cfg.Profile.Emulation != nil)
}
